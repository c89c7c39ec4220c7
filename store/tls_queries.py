"""The TLS report list (filters, orders, pages, totals) and one report, per organization."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from peewee import fn

from store.clock import to_epoch
from store.models import TlsDay, TlsPolicy, TlsReport

SUMMARY_COLUMNS = (TlsReport.id, TlsReport.report_id, TlsReport.org_name,
                   TlsReport.policy_domains, TlsReport.date_begin, TlsReport.date_end,
                   TlsReport.received_at, TlsReport.successful_sessions,
                   TlsReport.failed_sessions, TlsReport.success_rate, TlsReport.authenticity,
                   TlsReport.signed_by)
TLS_SORTS = {
    "date_end": TlsReport.date_end,
    "received": TlsReport.received_at,
    "org_name": fn.LOWER(TlsReport.org_name),
    "failed_sessions": TlsReport.failed_sessions,
}


@dataclass(frozen=True)
class TlsFilter:
    """The filters and order of GET /tls-reports, already parsed and validated."""
    domain: str | None = None          # exact policy domain
    result: str | None = None          # "pass": no failed session | "fail": at least one
    day_from: date | None = None       # on or after, by day_begin
    day_to: date | None = None         # on or before, by day_end
    sort_by: str = "date_end"
    descending: bool = True
    authenticity: str | None = None    # exact (rules/authenticity.py's values)


def tls_page(org_id: str, f: TlsFilter, limit: int, offset: int) -> list[TlsReport]:
    """One page of the org's TLS reports matching f, in f's order (id breaks ties)."""
    key = TLS_SORTS.get(f.sort_by, TlsReport.date_end)
    order = (key.desc(), TlsReport.id.desc()) if f.descending else (key.asc(), TlsReport.id.asc())
    query = TlsReport.select(*SUMMARY_COLUMNS).where(_conditions(org_id, f))
    return list(query.order_by(*order).limit(limit).offset(offset))


def tls_total(org_id: str, f: TlsFilter) -> int:
    return TlsReport.select().where(_conditions(org_id, f)).count()


def has_any(org_id: str) -> bool:
    return TlsReport.select().where(TlsReport.org == org_id).exists()


def tls_report(org_id: str, report_id: str) -> TlsReport | None:
    """The org's TLS report with this id (another organization's is None)."""
    return TlsReport.get_or_none(TlsReport.org == org_id, TlsReport.id == report_id)


def _conditions(org_id: str, f: TlsFilter):
    cond = TlsReport.org == org_id
    if f.domain is not None:
        holding = TlsPolicy.select(TlsPolicy.report).where(
            (TlsPolicy.org == org_id) & (TlsPolicy.policy_domain == f.domain))
        cond &= TlsReport.id.in_(holding)
    if f.result == "pass":
        cond &= TlsReport.failed_sessions == 0
    elif f.result == "fail":
        cond &= TlsReport.failed_sessions > 0
    if f.authenticity is not None:
        cond &= TlsReport.authenticity == f.authenticity
    if f.day_from is not None:
        cond &= TlsReport.day_begin >= f.day_from
    if f.day_to is not None:
        # As /reports: an end at the next midnight belongs to the day before.
        midnight = to_epoch(datetime.combine(f.day_to + timedelta(days=1), datetime.min.time()))
        cond &= (TlsReport.day_end <= f.day_to) & (TlsReport.date_end <= midnight)
    return cond


def report_counts(org_id: str) -> dict[str, int]:
    """TLS reports held per policy domain, from the daily rollups (never the report table)."""
    rows = (TlsDay.select(TlsDay.domain, fn.SUM(TlsDay.reports))
            .where(TlsDay.org == org_id).group_by(TlsDay.domain).tuples())
    return {domain: int(count) for domain, count in rows}
