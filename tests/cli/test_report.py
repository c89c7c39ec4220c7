"""`rua report copies|replace`: the kept copies listed, a dry run that changes nothing, and a
replace the API shows (/reports/{id}, /tls-reports/{id}) that replacing again undoes."""
import time

from ingest.pipeline import ingest_paths
from store import db
from store.clock import utcnow
from store.models import DailyRollup, Report, TlsDay, TlsReport
from tests.factories import make_domain, make_key
from tests.ingest import tlsbuild as tb
from tests.ingest import xmlbuild as xb
from webapp import create_app

GENUINE = xb.report_bytes(report_id="2026-03-05", records=[xb.record(count=12)])
FORGED = xb.report_bytes(report_id="2026-03-05", records=[
    xb.record(source_ip="198.51.100.7", count=999_999, dkim="fail", spf="fail")])


def ingest(config, tmp_path, name, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    [result] = ingest_paths([path], config=config)
    return result.status


def api(config, database, path: str, org) -> dict:
    """GET path as the org's owner, from an app of its own over the test's store."""
    key = make_key(org, scope="read", role="owner")[1]
    client = create_app(config).test_client()
    try:
        resp = client.get(f"/api/v1{path}", headers={"Authorization": f"Bearer {key}"})
    finally:
        db.initialize(database)      # create_app pointed the shared proxy at its own store
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


def test_copies_are_listed_and_a_dry_run_changes_nothing(rua, acme, config, tmp_path):
    make_domain(acme, "example.com")
    assert ingest(config, tmp_path, "forged.xml", FORGED) == "stored"
    assert ingest(config, tmp_path, "genuine.xml", GENUINE) == "refused"
    listed = rua("report", "copies", "Acme")
    assert listed.exit_code == 0
    assert listed.stdout.startswith("copy 1  dmarc  arrived  ")
    assert listed.stdout.rstrip().endswith(
        "Example Receiver report 2026-03-05 for example.com, 2023-11-14 to 2023-11-15")
    dry = rua("report", "replace", "1")
    assert dry.exit_code == 0, dry.output
    [report] = Report.select()
    assert dry.stdout.splitlines() == [
        f"copy 1 would replace report {report.id} (Example Receiver report 2026-03-05 for "
        f"example.com, 2023-11-14 to 2023-11-15)",
        "  messages: 999,999 -> 12", "  compliant: 0 -> 12", "  records: 1 -> 1",
        "dry run: nothing changed; add --yes to replace"]
    assert [r.messages for r in DailyRollup.select()] == [999_999]


def test_replace_puts_the_genuine_report_in_place_and_back(rua, acme, config, database,
                                                          tmp_path):
    make_domain(acme, "example.com")
    ingest(config, tmp_path, "forged.xml", FORGED)
    ingest(config, tmp_path, "genuine.xml", GENUINE)
    done = rua("report", "replace", "1", "--yes")
    assert done.exit_code == 0, done.output
    [report] = Report.select()
    lines = done.stdout.splitlines()
    assert lines[-2] == f"stored as report {report.id}"
    assert lines[-1] == ("the replaced report is kept as copy 2; `rua report replace 2 --yes` "
                         "undoes this")
    detail = api(config, database, f"/reports/{report.id}", acme)
    assert [(r["Row"]["SourceIP"], r["Row"]["Count"]) for r in detail["Records"]] == [
        ("192.0.2.1", 12)]
    assert [(r.source_ip, r.messages) for r in DailyRollup.select()] == [("192.0.2.1", 12)]
    assert rua("report", "replace", "2", "--yes").exit_code == 0
    assert [(r.source_ip, r.messages) for r in DailyRollup.select()] == [("198.51.100.7",
                                                                          999_999)]


def test_a_list_remembered_before_a_replace_shows_the_genuine_report_after(rua, acme, config,
                                                                          database, tmp_path):
    make_domain(acme, "example.com")
    ingest(config, tmp_path, "forged.xml", FORGED)
    ingest(config, tmp_path, "genuine.xml", GENUINE)
    key = make_key(acme, scope="read", role="owner")[1]
    client = create_app(config).test_client()      # one app: what it remembers is kept

    def listed() -> list[int]:
        resp = client.get("/api/v1/reports", headers={"Authorization": f"Bearer {key}"})
        db.initialize(database)
        return [r["total_messages"] for r in resp.get_json()["reports"]]
    assert listed() == [999_999]
    assert rua("report", "replace", "1", "--yes").exit_code == 0
    assert listed() == [12]


def test_a_forged_tls_report_is_replaced_and_the_api_shows_the_genuine(rua, acme, config,
                                                                       database, tmp_path):
    make_domain(acme, "example.com")
    report_id = "2024-01-09T00:00:00Z_example.com"
    forged = tb.report_bytes([tb.policy(successful=0, failed=5000)], report_id=report_id)
    ingest(config, tmp_path, "forged.json", forged)
    ingest(config, tmp_path, "genuine.json", tb.report_bytes([tb.policy(successful=40)],
                                                             report_id=report_id))
    assert rua("report", "replace", "1", "--yes").exit_code == 0
    [report] = TlsReport.select()
    detail = api(config, database, f"/tls-reports/{report.id}", acme)
    assert [p["summary"] for p in detail["policies"]] == [
        {"total-successful-session-count": 40, "total-failure-session-count": 0}]
    assert [(d.successful_sessions, d.failed_sessions) for d in TlsDay.select()] == [(40, 0)]


def test_a_pruned_report_or_an_unknown_copy_is_refused_in_one_line(rua, acme, config, tmp_path):
    make_domain(acme, "example.com")
    ingest(config, tmp_path, "forged.xml", FORGED)
    ingest(config, tmp_path, "genuine.xml", GENUINE)
    Report.update(records_pruned_at=utcnow()).execute()
    pruned = rua("report", "replace", "1", "--yes")
    assert pruned.exit_code == 2
    assert "cannot be replaced: retention deleted its records on" in pruned.stderr
    unknown = rua("report", "replace", "9")
    assert (unknown.exit_code, unknown.stderr) == (
        2, "rua: error: no kept copy 9 (`rua report copies ORG` lists them)\n")
    assert [r.messages for r in DailyRollup.select()] == [999_999]


def test_the_snapshots_show_the_copy_put_in_place_after_the_next_refresh(rua, acme, config,
                                                                         database, tmp_path):
    make_domain(acme, "example.com")
    begin = (int(time.time()) // 86400 - 2) * 86400          # the day before yesterday
    window = {"report_id": "recent", "begin": begin, "end": begin + 86399}
    ingest(config, tmp_path, "forged.xml", xb.report_bytes(
        records=[xb.record(source_ip="198.51.100.7", count=999_999, dkim="fail", spf="fail")],
        **window))
    ingest(config, tmp_path, "genuine.xml", xb.report_bytes(records=[xb.record(count=12)],
                                                           **window))

    def card() -> tuple:
        assert rua("snapshot", "--org", "Acme").exit_code == 0
        [found] = api(config, database, "/dashboard/overview", acme)["domain_cards"]
        return found["total_messages"], found["compliance_rate"]
    assert card() == (999_999, 0.0)
    assert rua("report", "replace", "1", "--yes").exit_code == 0
    assert card() == (12, 100.0)


def test_a_report_without_a_reporter_name_is_named_as_such(rua, acme, config, tmp_path):
    make_domain(acme, "example.com")
    unnamed = {"org_name": "", "report_id": "2026-03-05"}
    assert ingest(config, tmp_path, "a.xml", xb.report_bytes(**unnamed)) == "stored"
    changed = xb.report_bytes(**unnamed, records=[xb.record(count=7)])
    assert ingest(config, tmp_path, "b.xml", changed) == "refused"
    listed = rua("report", "copies", "Acme").stdout
    assert "report 2026-03-05 of an unnamed reporter for example.com" in listed
    assert "( report" not in listed
    dry = rua("report", "replace", "1").stdout
    assert "(report 2026-03-05 of an unnamed reporter for example.com, " in dry
