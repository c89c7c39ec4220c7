"""The report list (filters, orders, pages, totals) and the report detail, per organization."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from peewee import JOIN, fn

from store.addresses import canonical_ip
from store.clock import FIRST_REPORT_DAY, to_epoch
from store.compiled import Compiled, raw_rows
from store.models import DomainDay, Record, Report, Source

ONE_DAY = timedelta(days=1)
SUMMARY_COLUMNS = (Report.id, Report.report_id, Report.org_name, Report.domain,
                   Report.total_messages, Report.compliant_messages, Report.compliance_rate,
                   Report.p, Report.date_begin, Report.date_end, Report.received_at,
                   Report.day_begin, Report.day_end)
# String sorts are case-insensitive (indexes on lower(...) in store/models.py serve them).
REPORT_SORTS = {
    "date_end": Report.date_end,
    "received": Report.received_at,
    "org_name": fn.LOWER(Report.org_name),
    "domain": Report.domain,
    "total_messages": Report.total_messages,
    "report_id": fn.LOWER(Report.report_id),
    "compliance": Report.compliance_rate,
}


@dataclass(frozen=True)
class ReportFilter:
    """The filters and order of GET /reports, already parsed and validated."""
    domain: str | None = None          # substring of the policy domain
    org_name: str | None = None        # substring of the reporting organization
    result: str | None = None          # "pass" | "fail"
    source_ip: str | None = None       # exact
    day_from: date | None = None       # on or after, by day_begin
    day_to: date | None = None         # on or before, by day_end
    search: str | None = None
    sort_by: str = "date_end"
    descending: bool = True
    domains: tuple[str, ...] | None = None   # the policy domains `domain` matched

    @property
    def is_empty(self) -> bool:
        return self.domain is None and self.by_domain_only

    @property
    def by_domain_only(self) -> bool:
        return not any((self.org_name, self.result, self.source_ip, self.day_from, self.day_to,
                        self.search))

    @property
    def count_key(self) -> "ReportFilter":
        """The same filter without its order: what a total depends on."""
        return replace(self, sort_by="", descending=False, domain=None)


def matching_domains(org_id: str, term: str) -> tuple[str, ...]:
    """The policy domains of the org's reports whose name contains term (any case)."""
    # DomainDay holds every policy domain of the org's reports (same transaction as the report).
    names = (DomainDay.select(DomainDay.domain).distinct()
             .where((DomainDay.org == org_id) & DomainDay.domain.contains(term)).tuples())
    return tuple(sorted(name for (name,) in names))


def report_page(org_id: str, f: ReportFilter):
    """Report summaries (tuples in SUMMARY_COLUMNS order) matching f (domains set), in f's order."""
    query = Report.select(*SUMMARY_COLUMNS).where(_report_conditions(org_id, f))
    key = REPORT_SORTS.get(f.sort_by, Report.date_end)
    if f.descending:
        return query.order_by(key.desc(), Report.id.desc()).tuples()
    return query.order_by(key.asc(), Report.id.asc()).tuples()


_PAGES: dict = {}
COMPILED_DOMAINS = 8     # up to this many matched domains, a page shape's SQL is built once


def report_rows(org_id: str, f: ReportFilter, limit: int, offset: int) -> list[tuple]:
    """One page of report summaries (raw SUMMARY_COLUMNS rows) matching f (domains set).

    Common shapes (domains, result, source IP, any order) run SQL built once per shape; the
    rest (text and date filters) build theirs per request."""
    if (f.org_name or f.search or f.day_from or f.day_to
            or len(f.domains or ()) > COMPILED_DOMAINS):
        return raw_rows(report_page(org_id, f).limit(limit).offset(offset))
    shape = (f.result, bool(f.source_ip), None if f.domains is None else len(f.domains),
             f.sort_by, f.descending)
    compiled = _PAGES.get(shape)
    if compiled is None:
        compiled = _PAGES[shape] = Compiled(lambda **marks: _shaped_page(f, **marks))
    values = {"org": org_id, "limit": limit, "offset": offset}
    if f.source_ip:
        values["ip"] = f.source_ip
    values.update((f"d{i}", name) for i, name in enumerate(f.domains or ()))
    return compiled.run(**values)


def _shaped_page(f: ReportFilter, org, limit, offset, ip=None, **domains):
    names = None if f.domains is None else tuple(domains[f"d{i}"] for i in range(len(f.domains)))
    marked = replace(f, source_ip=ip, domains=names)
    return report_page(org, marked).limit(limit).offset(offset)


def report_total(org_id: str, f: ReportFilter) -> int:
    """How many reports match f (domains set); by domain alone it is a sum over DomainDay."""
    if f.by_domain_only:
        total = DomainDay.select(fn.SUM(DomainDay.reports)).where(DomainDay.org == org_id)
        if f.domains is not None:
            if not f.domains:
                return 0
            total = total.where(DomainDay.domain.in_(list(f.domains)))
        return int(total.scalar() or 0)
    return Report.select().where(_report_conditions(org_id, f)).count()


def _report_conditions(org_id: str, f: ReportFilter):
    cond = Report.org == org_id
    if f.domains is not None:
        cond &= Report.domain.in_(list(f.domains))
    if f.org_name:
        cond &= Report.org_name.contains(f.org_name)
    if f.result == "pass":
        # Every message passed; the rate is then exactly 100.0, which lets an index seek
        # ("+ 0" keeps the planner from preferring the total_messages index for "> 0").
        cond &= (((Report.total_messages + 0) > 0)
                 & (Report.compliant_messages == Report.total_messages)
                 & (Report.compliance_rate == 100.0))
    elif f.result == "fail":
        # Written exactly as the partial index's condition (store/models.py).
        cond &= Report.compliant_messages < Report.total_messages
    if f.day_from is not None:
        cond &= Report.day_begin >= f.day_from
    if f.day_to is not None:
        # day_end <= to implies the window ended by the next midnight: a range on date_end.
        cond &= (Report.day_end <= f.day_to) & (Report.date_end <= _midnight(f.day_to + ONE_DAY))
    if f.source_ip:
        holding = (Record.select(Record.report)
                   .where((Record.org == org_id) & (Record.source_ip == f.source_ip)))
        cond &= Report.id.in_(holding)
    if f.search:
        term = f.search
        cond &= (Report.org_name.contains(term) | Report.domain.contains(term)
                 | Report.report_id.contains(term) | Report.id.contains(term))
    return cond


def _midnight(day: date) -> int:
    return to_epoch(datetime.combine(day, datetime.min.time()))


# The detail's columns; JSON columns come back as their stored text (served as is).
DETAIL_COLUMNS = (Report.version, Report.org_name, Report.email, Report.extra_contact_info,
                  Report.report_id, Report.date_begin, Report.date_end, Report.errors,
                  Report.generator, Report.domain, Report.adkim, Report.aspf, Report.p, Report.sp,
                  Report.np, Report.pct, Report.fo, Report.testing, Report.psd,
                  Report.discovery_method, Report.parse_warnings, Report.failure_summary)
RECORD_COLUMNS = (Record.source_ip, Record.count, Record.disposition, Record.dkim, Record.spf,
                  Record.reasons, Record.envelope_to, Record.envelope_from, Record.header_from,
                  Record.auth_dkim, Record.auth_spf, Record.alignment, Record.classification,
                  # What enrichment knows of the sender, which the record's evidence names.
                  Source.service_slug, Source.service_kind, Source.abuse_status,
                  Source.service_name)
_REPORT = Compiled(lambda id, org: Report.select(*DETAIL_COLUMNS)
                   .where((Report.id == id) & (Report.org == org)))
# Records are read this many at a time: a worker holds a page, never a whole large report.
RECORDS_PAGE = 1000
_RECORD_PAGE = Compiled(lambda id, org, after, size: Record.select(Record.ordinal, *RECORD_COLUMNS)
                        .join(Source, JOIN.LEFT_OUTER,
                              on=(Source.org == Record.org) & (Source.ip == Record.source_ip))
                        .where((Record.report == id) & (Record.org == org)
                               & (Record.ordinal > after))
                        .order_by(Record.ordinal).limit(size))


def report(org_id: str, report_id: str) -> tuple | None:
    """The report (a DETAIL_COLUMNS tuple) with this canonical id in the org, or None."""
    rows = _REPORT.run(id=report_id, org=org_id)
    return rows[0] if rows else None


class RecordPages:
    """The report's records (RECORD_COLUMNS tuples, in the reporter's order) page by page,
    each page read when reached; iterable again (the first page is kept, so a report of one
    page costs one query however often it is walked)."""

    def __init__(self, org_id: str, report_id: str, size: int = RECORDS_PAGE):
        self.org_id, self.report_id, self.size = org_id, report_id, size
        self.first, self.after_first = self._page(-1)

    def _page(self, after: int) -> tuple[list[tuple], int | None]:
        """(the page's records, the ordinal to read on from; None after the last page)."""
        rows = _RECORD_PAGE.run(id=self.report_id, org=self.org_id, after=after, size=self.size)
        more = rows[-1][0] if len(rows) == self.size else None
        return _respelled(self.org_id, [row[1:] for row in rows]), more

    def __iter__(self):
        page, after = self.first, self.after_first
        yield page
        while after is not None:
            page, after = self._page(after)
            yield page


def records(org_id: str, report_id: str) -> list[tuple]:
    """The report's records (RECORD_COLUMNS tuples) in the reporter's order, all at once."""
    return [row for page in RecordPages(org_id, report_id) for row in page]


def _respelled(org_id: str, rows: list[tuple]) -> list[tuple]:
    """Rows with their Source row's columns; a record giving another spelling of its address
    is matched by its canonical text, in one more query and only when there is one."""
    respelled = {row[0] for row in rows if row[13] is None and canonical_ip(row[0]) != row[0]}
    if not respelled:
        return rows
    known = {ip: rest for ip, *rest in Source.select(
        Source.ip, Source.service_slug, Source.service_kind, Source.abuse_status,
        Source.service_name).where(Source.org == org_id, Source.ip.in_(
            sorted({canonical_ip(ip) for ip in respelled}))).tuples()}
    return [(*row[:13], *known[canonical_ip(row[0])])
            if row[0] in respelled and canonical_ip(row[0]) in known else row for row in rows]


def report_date_range(org_id: str) -> tuple[date | None, date | None]:
    # A report dated before DMARC existed (a reporter's clock at 0) would stretch the range.
    dated = Report.select().where(Report.org == org_id, Report.day_begin >= FIRST_REPORT_DAY)
    earliest = dated.select(fn.MIN(Report.day_begin)).scalar()
    latest = dated.select(fn.MAX(Report.day_end)).scalar()
    return _as_date(earliest), _as_date(latest)


def _as_date(value):
    # SQLite hands aggregates back as text.
    return date.fromisoformat(value) if isinstance(value, str) else value
