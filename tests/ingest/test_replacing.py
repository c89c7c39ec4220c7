"""ingest/replacing.py: a kept copy put in place of the stored report, every figure following,
the stored one kept aside so replacing again undoes it; a dry run changes nothing."""
import pytest

from ingest.model import ReportError
from ingest.pipeline import ingest_paths
from ingest.replacing import replace
from store.clock import utcnow
from store.models import (DailyRollup, DomainDay, Organization, Record, Report, ReportCopy,
                          Source, SourceDomain, TlsDay, TlsPolicy, TlsReport)
from tests.factories import make_domain, make_org
from tests.ingest import tlsbuild as tb
from tests.ingest import xmlbuild as xb

GENUINE = xb.report_bytes(report_id="2026-03-05", records=[
    xb.record(source_ip="192.0.2.1", count=12),
    xb.record(source_ip="192.0.2.2", count=3, dkim="fail")])
FORGED = xb.report_bytes(report_id="2026-03-05", records=[
    xb.record(source_ip="198.51.100.7", count=999_999, dkim="fail", spf="fail")])
# Another reporter's report of the same day and a shared source: its figures must stay.
OTHER = xb.report_bytes(org_name="Other Receiver", report_id="o-1",
                        records=[xb.record(source_ip="192.0.2.1", count=5)])


def ingest(config, tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    [result] = ingest_paths([path], config=config)
    return result


def figures() -> dict:
    """Every figure a report adds to, without ids and times."""
    return {
        "reports": sorted(Report.select(Report.org_name, Report.report_id, Report.total_messages,
                                        Report.compliant_messages, Report.record_count).tuples()),
        "records": sorted(Record.select(Record.source_ip, Record.count, Record.dkim, Record.spf)
                          .tuples()),
        "rollups": sorted(DailyRollup.select(
            DailyRollup.domain, DailyRollup.day, DailyRollup.source_ip, DailyRollup.messages,
            DailyRollup.compliant, DailyRollup.spf_aligned_pass, DailyRollup.dkim_aligned_pass,
            DailyRollup.forwarded, DailyRollup.reports).tuples()),
        "days": sorted(DomainDay.select(DomainDay.domain, DomainDay.day, DomainDay.reports,
                                        DomainDay.messages).tuples()),
        "source_domains": sorted(SourceDomain.select(
            SourceDomain.domain, SourceDomain.ip, SourceDomain.messages, SourceDomain.compliant,
            SourceDomain.spf_fail, SourceDomain.dkim_fail, SourceDomain.forwarded,
            SourceDomain.quarantined, SourceDomain.rejected, SourceDomain.reports).tuples()),
        "sources": sorted(Source.select(
            Source.ip, Source.messages, Source.compliant, Source.spf_fail, Source.dkim_fail,
            Source.auth_failures, Source.forwarded, Source.compliance_rate,
            Source.domain_count).tuples()),
        "tls_reports": sorted(TlsReport.select(TlsReport.report_id, TlsReport.successful_sessions,
                                               TlsReport.failed_sessions).tuples()),
        "tls_policies": TlsPolicy.select().count(),
        "tls_days": sorted((d.domain, d.day, d.reports, d.successful_sessions, d.failed_sessions,
                            d.failures) for d in TlsDay.select()),
    }


@pytest.fixture
def genuine_then_forged(database, config, tmp_path):
    """The genuine report and another stored, the forged copy kept aside as copy 1."""
    make_domain(make_org(), "example.com")
    assert ingest(config, tmp_path, "other.xml", OTHER).status == "stored"
    assert ingest(config, tmp_path, "genuine.xml", GENUINE).status == "stored"
    genuine = figures()
    assert ingest(config, tmp_path, "forged.xml", FORGED).status == "refused"
    assert figures() == genuine
    return genuine


def test_a_dry_run_says_what_would_change_and_changes_nothing(genuine_then_forged):
    swap = replace(1, apply=False)
    assert [tuple(f) for f in swap.figures] == [("messages", 15, 999_999), ("compliant", 15, 0),
                                                ("records", 2, 1)]
    assert swap.replaced.startswith("report ") and swap.kept_id == 2
    assert figures() == genuine_then_forged
    assert [c.id for c in ReportCopy.select()] == [1]


def test_replacing_swaps_every_figure_and_replacing_back_restores_them(genuine_then_forged,
                                                                       config, tmp_path):
    Organization.update(dirty_since=None).execute()
    swap = replace(1, apply=True)
    assert Organization.get().dirty_since is not None
    forged = figures()
    assert forged["reports"] == [("Example Receiver", "2026-03-05", 999_999, 0, 1),
                                 ("Other Receiver", "o-1", 5, 5, 1)]
    assert [row[2:] for row in forged["rollups"]] == [("192.0.2.1", 5, 5, 5, 5, 0, 1),
                                                      ("198.51.100.7", 999_999, 0, 0, 0, 0, 1)]
    assert [row[2:] for row in forged["days"]] == [(2, 1_000_004)]
    assert [row[0] for row in forged["sources"]] == ["192.0.2.1", "198.51.100.7"]
    [kept] = ReportCopy.select()
    assert (kept.id, kept.reason, kept.form) == (swap.kept_id, "replaced", "stored")

    back = replace(swap.kept_id, apply=True)
    assert back.kept_id != swap.kept_id and figures() == genuine_then_forged
    # The operator's choice stands: either copy arriving again changes nothing.
    assert ingest(config, tmp_path, "genuine-again.xml", GENUINE).status == "duplicate"
    assert ingest(config, tmp_path, "forged-again.xml", FORGED).status == "refused"
    assert figures() == genuine_then_forged and ReportCopy.select().count() == 1


def test_a_report_whose_records_were_pruned_is_not_replaced(genuine_then_forged):
    Report.update(records_pruned_at=utcnow()).execute()
    with pytest.raises(ReportError, match=r"retention deleted its records on .* "
                                          r"\(records_pruned_at\)"):
        replace(1, apply=True)
    assert figures()["rollups"] == genuine_then_forged["rollups"]
    assert [c.id for c in ReportCopy.select()] == [1]


def test_an_unknown_copy_is_refused_saying_where_copies_are_listed(database):
    with pytest.raises(ReportError, match=r"^no kept copy 7 \(`rua report copies ORG`"):
        replace(7, apply=True)


def test_a_forged_tls_report_is_replaced_by_the_genuine_and_back(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    report_id = "2024-01-09T00:00:00Z_example.com"
    ingest(config, tmp_path, "other.json", tb.report_bytes(
        [tb.policy(successful=7, failed=1, failures={"validation-failure": 1})], report_id="o"))
    forged = tb.report_bytes([tb.policy(successful=0, failed=5000,
                                        failures={"certificate-expired": 5000})],
                             report_id=report_id)
    genuine = tb.report_bytes([tb.policy(successful=40)], report_id=report_id)
    assert ingest(config, tmp_path, "forged.json", forged).status == "stored"
    before = figures()
    assert ingest(config, tmp_path, "genuine.json", genuine).status == "refused"
    dry = replace(1, apply=False)
    assert [tuple(f) for f in dry.figures] == [("successful sessions", 0, 40),
                                               ("failed sessions", 5000, 0)]
    assert figures() == before

    kept = replace(1, apply=True).kept_id     # a dry run's ids are not given back on Postgres
    after = figures()
    assert after["tls_days"] == [("example.com", before["tls_days"][0][1], 2, 47, 1,
                                  {"validation-failure": 1})]
    assert after["tls_reports"] == [(report_id, 40, 0), ("o", 7, 1)]
    replace(kept, apply=True)
    assert figures() == before
