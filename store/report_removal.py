"""A stored report taken back out (`rua report replace`): its rows deleted and the figures it
added subtracted from the daily rollups, day totals and source facts, which ingest only adds to.

The sums come from the caller, computed by the same code that added them (ingest's tally and
TLS day sums), so adding a report and taking it out again leaves every figure as it was. A row
no report counts any more goes; windows (first and last seen), policies and spellings a report
widened or left stay as they are.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import date

from store import events, snapshots
from store.models import (DailyRollup, DomainDay, Record, Report, Source, SourceDomain, TlsDay,
                          TlsPolicy, TlsReport)


def remove_report(report: Report, day: date, by_ip: list, dispositions: dict,
                  percentage: Callable[[int, int], float]) -> None:
    """Delete a DMARC report with its records and subtract its sums: by_ip is its tally's
    [(ip, [messages, compliant, spf aligned pass, dkim aligned pass, forwarded])], dispositions
    its {ip: [quarantined, rejected]} (ingest/rollups.ReportTally). percentage is the rule a
    source's compliance rate is kept by (rules.rates.percentage, which store, below rules,
    is handed)."""
    org, domain = report.org_id, report.domain
    # The snapshotter sums again only the days of new reports: this one's day changed without.
    snapshots.remove(org, snapshots.DAY_TOTALS)
    for ip, (messages, compliant, spf_aligned_pass, dkim_aligned_pass, forwarded) in by_ip:
        (DailyRollup.update(messages=DailyRollup.messages - messages,
                            compliant=DailyRollup.compliant - compliant,
                            spf_aligned_pass=DailyRollup.spf_aligned_pass - spf_aligned_pass,
                            dkim_aligned_pass=DailyRollup.dkim_aligned_pass - dkim_aligned_pass,
                            forwarded=DailyRollup.forwarded - forwarded,
                            reports=DailyRollup.reports - 1)
         .where(DailyRollup.org == org, DailyRollup.domain == domain, DailyRollup.day == day,
                DailyRollup.source_ip == ip).execute())
        quarantined, rejected = dispositions.get(ip, (0, 0))
        _subtract_source(org, domain, ip, messages, compliant, messages - spf_aligned_pass,
                         messages - dkim_aligned_pass, forwarded, quarantined, rejected,
                         percentage)
    DailyRollup.delete().where(DailyRollup.org == org, DailyRollup.domain == domain,
                               DailyRollup.day == day, DailyRollup.reports <= 0).execute()
    (DomainDay.update(reports=DomainDay.reports - 1,
                      messages=DomainDay.messages - report.total_messages)
     .where(DomainDay.org == org, DomainDay.domain == domain, DomainDay.day == day).execute())
    DomainDay.delete().where(DomainDay.org == org, DomainDay.domain == domain,
                             DomainDay.day == day, DomainDay.reports <= 0).execute()
    Record.delete().where(Record.report == report.id).execute()
    Report.delete().where(Report.id == report.id).execute()
    events.reports_changed(org)


def _subtract_source(org, domain, ip, messages, compliant, spf_fail, dkim_fail, forwarded,
                     quarantined, rejected, percentage) -> None:
    """Take one IP's sums out of its SourceDomain and Source rows; a source no longer seen
    for the domain loses it from its domain count, and one seen for none goes."""
    where = (SourceDomain.org == org) & (SourceDomain.ip == ip) & (SourceDomain.domain == domain)
    (SourceDomain.update(messages=SourceDomain.messages - messages,
                         compliant=SourceDomain.compliant - compliant,
                         spf_fail=SourceDomain.spf_fail - spf_fail,
                         dkim_fail=SourceDomain.dkim_fail - dkim_fail,
                         forwarded=SourceDomain.forwarded - forwarded,
                         quarantined=SourceDomain.quarantined - quarantined,
                         rejected=SourceDomain.rejected - rejected,
                         reports=SourceDomain.reports - 1).where(where).execute())
    gone = SourceDomain.delete().where(where & (SourceDomain.reports <= 0)).execute()
    source = Source.get_or_none(Source.org == org, Source.ip == ip)
    if source is None:
        return
    if gone and source.domain_count <= 1:
        Source.delete().where(Source.id == source.id).execute()
        return
    left, passed = source.messages - messages, source.compliant - compliant
    (Source.update(messages=left, compliant=passed,
                   spf_fail=Source.spf_fail - spf_fail, dkim_fail=Source.dkim_fail - dkim_fail,
                   auth_failures=Source.auth_failures - spf_fail - dkim_fail,
                   forwarded=Source.forwarded - forwarded,
                   compliance_rate=percentage(passed, left) if left else 0.0,
                   domain_count=Source.domain_count - (1 if gone else 0))
     .where(Source.id == source.id).execute())


def remove_tls_report(report: TlsReport, day: date, by_domain: dict) -> None:
    """Delete a TLS report with its policies and subtract its sessions from its domains' day:
    by_domain is {domain: (successful, failed, {result type: failed})} as ingest added them."""
    for domain, (successful, failed, failures) in sorted(by_domain.items()):
        row = TlsDay.get_or_none(TlsDay.org == report.org_id, TlsDay.domain == domain,
                                 TlsDay.day == day)
        if row is None:
            continue
        if row.reports <= 1:
            TlsDay.delete().where(TlsDay.id == row.id).execute()
            continue
        left = dict(row.failures or {})
        for kind, count in failures.items():
            left[kind] = left.get(kind, 0) - count
            if left[kind] <= 0:
                del left[kind]
        TlsDay.update(reports=TlsDay.reports - 1,
                      successful_sessions=TlsDay.successful_sessions - successful,
                      failed_sessions=TlsDay.failed_sessions - failed,
                      failures=left).where(TlsDay.id == row.id).execute()
    TlsPolicy.delete().where(TlsPolicy.report == report.id).execute()
    TlsReport.delete().where(TlsReport.id == report.id).execute()
