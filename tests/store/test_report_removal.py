"""store/report_removal.py: a report taken out leaves every figure as if it had never come,
rows other reports share kept with their sums, rows only it made gone."""
from __future__ import annotations

from ingest.rollups import ReportTally
from ingest.tls_storing import by_domain, day_sums
from ingest.tls_report import parse
from rules.rates import percentage
from rules.windows import window_days
from store import report_removal
from store.models import (DailyRollup, DomainDay, Record, Report, Source, SourceDomain, TlsDay,
                          TlsPolicy, TlsReport)
from tests.factories import make_domain, make_org, make_report, make_tls_report
from tests.ingest import tlsbuild as tb

SHARED, OWN = "192.0.2.1", "198.51.100.7"


def remove(report: Report) -> None:
    """Take the report out with the sums ingest's tally makes of its records."""
    tally = ReportTally()
    for r in Record.select().where(Record.report == report.id):
        tally.add(r.source_ip, r.count, r.dkim, r.spf, r.classification, r.disposition)
    day = window_days(report.date_begin, report.date_end)[2]
    report_removal.remove_report(report, day, tally.in_address_order(), tally.dispositions,
                                 percentage)


def facts() -> dict:
    return {
        "rollups": sorted(DailyRollup.select(DailyRollup.domain, DailyRollup.source_ip,
                                             DailyRollup.messages, DailyRollup.compliant,
                                             DailyRollup.reports).tuples()),
        "days": sorted(DomainDay.select(DomainDay.domain, DomainDay.reports,
                                        DomainDay.messages).tuples()),
        "source_domains": sorted(SourceDomain.select(
            SourceDomain.domain, SourceDomain.ip, SourceDomain.messages, SourceDomain.dkim_fail,
            SourceDomain.rejected, SourceDomain.reports).tuples()),
        "sources": sorted(Source.select(Source.ip, Source.messages, Source.compliant,
                                        Source.dkim_fail, Source.compliance_rate,
                                        Source.domain_count).tuples()),
    }


def test_a_report_taken_out_leaves_the_figures_the_others_made(database):
    org = make_org()
    make_domain(org, "example.com")
    make_domain(org, "example.net")
    make_report(org, "example.com", [{"source_ip": SHARED, "count": 4}])
    make_report(org, "example.net", [{"source_ip": SHARED, "count": 6}])
    before = facts()
    doomed = make_report(org, "example.com", [
        {"source_ip": SHARED, "count": 3, "dkim": "fail"},
        {"source_ip": OWN, "count": 9, "dkim": "fail", "spf": "fail", "disposition": "reject"}])
    assert facts() != before
    remove(doomed)
    assert facts() == before
    assert not Record.select().where(Record.report == doomed.id).exists()
    assert Report.get_or_none(Report.id == doomed.id) is None


def test_a_source_seen_only_in_the_report_taken_out_goes_with_its_domain(database):
    org = make_org()
    make_domain(org, "example.com")
    doomed = make_report(org, "example.com", [{"source_ip": OWN, "count": 2}])
    remove(doomed)
    assert facts() == {"rollups": [], "days": [], "source_domains": [], "sources": []}


def test_a_tls_report_taken_out_leaves_its_domains_day_as_the_others_made_it(database):
    org = make_org()
    make_domain(org, "example.com")
    make_tls_report(org, [tb.policy(successful=7, failed=1, failures={"validation-failure": 1})],
                    report_id="kept")
    before = [(d.reports, d.successful_sessions, d.failed_sessions, d.failures)
              for d in TlsDay.select()]
    doomed = make_tls_report(org, [
        tb.policy(successful=2, failed=5, failures={"validation-failure": 2,
                                                    "certificate-expired": 3}),
        tb.policy("mail.example.com", 1, 0)], report_id="doomed")
    sums = {domain: day_sums(policies)
            for domain, policies in by_domain(parse(doomed.body.encode(), "r.json")).items()}
    day = window_days(doomed.date_begin, doomed.date_end)[2]
    report_removal.remove_tls_report(doomed, day, sums)
    assert [(d.reports, d.successful_sessions, d.failed_sessions, d.failures)
            for d in TlsDay.select()] == before
    assert [r.report_id for r in TlsReport.select()] == ["kept"]
    assert TlsPolicy.select().count() == 1
