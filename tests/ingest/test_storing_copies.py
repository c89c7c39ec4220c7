"""Copies of a report: the duplicate key holds the period, and a copy whose content differs
from the stored report under its key is refused as conflicting and kept aside, the stored report
unchanged, with one conflicting_copy event however many copies come."""
import json
import zlib

from ingest.pipeline import ingest_paths
from store.models import DailyRollup, Event, Record, Report, ReportCopy, TlsDay, TlsReport
from tests.factories import make_domain, make_org
from tests.ingest import tlsbuild as tb
from tests.ingest import xmlbuild as xb

DAY = 86400


def ingest(config, tmp_path, name, xml: bytes):
    path = tmp_path / name
    path.write_bytes(xml)
    [result] = ingest_paths([path], config=config)
    return result


def stored_rows():
    return sorted((r.id, r.report_id, r.date_begin, r.total_messages, r.content_digest)
                  for r in Report.select())


def test_a_report_id_reused_for_another_period_is_stored(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    for number in range(3):         # as Google and Mimecast do, one id for every day
        begin = 1700000000 + number * DAY
        result = ingest(config, tmp_path, f"day{number}.xml", xb.report_bytes(
            org_name="google.com", report_id="same-id", begin=begin, end=begin + DAY - 1))
        assert result.status == "stored", result.error
    assert Report.select().where(Report.report_id == "same-id").count() == 3


def test_a_copy_with_other_content_is_refused_naming_the_stored_report(database, config,
                                                                       tmp_path):
    make_domain(make_org(), "example.com")
    forged = xb.report_bytes(report_id="2026-03-05", records=[xb.record(count=999_999, dkim="fail",
                                                                        spf="fail")])
    first = ingest(config, tmp_path, "forged.xml", forged)
    assert first.status == "stored"
    before, records = stored_rows(), Record.select().count()
    genuine = ingest(config, tmp_path, "genuine.xml", xb.report_bytes(
        report_id="2026-03-05", records=[xb.record(count=12)]))
    [(report_id, *_)] = before
    assert genuine.status == "refused"
    assert genuine.error == (
        f"{tmp_path / 'genuine.xml'}: conflicting copy: report {report_id} (Example Receiver "
        f"report 2026-03-05 for example.com, 2023-11-14 to 2023-11-15) is stored with the same "
        f"reporter, report id, domain and period but other content; the stored report is kept "
        f"unchanged and this copy refused, kept aside as copy 1; if the stored one is the "
        f"forgery, `rua report replace 1` puts this copy in its place")
    assert (stored_rows(), Record.select().count()) == (before, records)
    [copy] = ReportCopy.select()
    assert (copy.kind, copy.reason, copy.form) == ("dmarc", "arrived", "received")
    assert zlib.decompress(copy.content) == xb.report_bytes(report_id="2026-03-05",
                                                            records=[xb.record(count=12)])
    assert [r.messages for r in DailyRollup.select()] == [999_999]


def test_a_thousand_copies_of_a_forgery_make_one_event_and_each_content_is_kept_once(
        database, config, tmp_path):
    make_domain(make_org(), "example.com")
    assert ingest(config, tmp_path, "genuine.xml", xb.report_bytes(report_id="r-9")).status \
        == "stored"
    folder = tmp_path / "copies"
    folder.mkdir()
    for number in range(1000):       # 990 the same, 10 others
        count = 999 + number % 10 if number < 10 else 999
        (folder / f"{number}.xml").write_bytes(xb.report_bytes(
            report_id="r-9", records=[xb.record(count=count)]))
    results = list(ingest_paths([folder], config=config))
    assert {r.status for r in results} == {"refused"} and len(results) == 1000
    assert ReportCopy.select().count() == 10
    [event] = Event.select()
    assert (event.type, event.severity, event.domain) == ("conflicting_copy", "warning",
                                                          "example.com")
    assert event.link == f"/reports/{Report.get().id}" and "copy 1" in event.detail


def test_the_same_content_again_is_a_plain_duplicate(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    xml = xb.report_bytes(report_id="r-7")
    assert ingest(config, tmp_path, "a.xml", xml).status == "stored"
    again = ingest(config, tmp_path, "b.xml.gz", xb.gzipped(xml))     # another wrapping
    assert (again.status, again.error, len(stored_rows())) == ("duplicate", None, 1)


def test_a_tls_copy_with_other_content_is_kept_aside_and_applies_to_no_figure(database, config,
                                                                             tmp_path):
    make_domain(make_org(), "example.com")
    forged = tb.report_bytes([tb.policy(successful=0, failed=5000,
                                        failures={"certificate-expired": 5000})],
                             report_id="2024-01-09T00:00:00Z_example.com")
    genuine = tb.report_bytes([tb.policy(successful=40)],
                              report_id="2024-01-09T00:00:00Z_example.com")
    assert ingest(config, tmp_path, "forged.json", forged).status == "stored"
    [stored] = TlsReport.select()
    folder = tmp_path / "copies"
    folder.mkdir()
    for number in range(1000):
        (folder / f"{number}.json").write_bytes(genuine)
    results = list(ingest_paths([folder], config=config))
    assert {r.status for r in results} == {"refused"} and len(results) == 1000
    refused = results[0]
    assert f": conflicting copy: TLS report {stored.id} (Example Sender report " in refused.error
    assert refused.error.endswith("kept aside as copy 1; if the stored one is the forgery, "
                                  "`rua report replace 1` puts this copy in its place")
    [copy] = ReportCopy.select()
    # Kept as TLS reports are stored: the same JSON, without its whitespace.
    assert copy.kind == "tlsrpt"
    assert json.loads(zlib.decompress(copy.content)) == json.loads(genuine)
    assert [(d.successful_sessions, d.failed_sessions) for d in TlsDay.select()] == [(0, 5000)]
    assert [e.type for e in Event.select()] == ["conflicting_copy"]


def test_a_tls_report_sent_again_is_a_duplicate(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    data = tb.report_bytes()
    assert ingest(config, tmp_path, "a.json", data).status == "stored"
    again = ingest(config, tmp_path, "b.json.gz", xb.gzipped(json.dumps(tb.report()).encode()))
    assert (again.status, ReportCopy.select().count()) == ("duplicate", 0)
