"""The report list (filters, orders, pages, totals) and the report detail, per organization."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import NamedTuple

from peewee import JOIN, fn

from store.addresses import canonical_ip
from store.clock import FIRST_REPORT_DAY, stored_date, to_epoch
from store.compiled import Compiled, raw_rows, rows_among
from store.models import DomainDay, PrunedAddress, Record, Report, Source

ONE_DAY = timedelta(days=1)
SUMMARY_COLUMNS = (Report.id, Report.report_id, Report.org_name, Report.domain,
                   Report.total_messages, Report.compliant_messages, Report.compliance_rate,
                   Report.p, Report.date_begin, Report.date_end, Report.received_at,
                   Report.day_begin, Report.day_end, Report.authenticity, Report.signed_by)


class SummaryRow(NamedTuple):
    """A row of SUMMARY_COLUMNS as the driver returns it: SQLite gives DATETIME and DATE
    columns as text, Postgres as datetime and date."""
    id: str
    report_id: str
    org_name: str
    domain: str
    total_messages: int
    compliant_messages: int
    compliance_rate: float
    policy_p: str
    date_begin: int             # epoch seconds, as the reporter gave them
    date_end: int
    received_at: object
    day_begin: object
    day_end: object
    authenticity: str           # what the report's mail proves (rules/authenticity.py)
    signed_by: str

# Every sort ends with the id as tie-breaker (the contract). String sorts are case-insensitive
# (indexes on lower(...) serve them; store/models.py, store/migrations.py REPORT_INDEXES).
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
    authenticity: str | None = None    # exact (rules/authenticity.py's values)

    @property
    def is_empty(self) -> bool:
        return self.domain is None and self.by_domain_only

    @property
    def by_domain_only(self) -> bool:
        return not any((self.org_name, self.result, self.source_ip, self.day_from, self.day_to,
                        self.search, self.authenticity))

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


def report_rows(org_id: str, f: ReportFilter, limit: int, offset: int) -> list[SummaryRow]:
    """One page of report summaries matching f (domains set).

    Common shapes (domains, result, source IP, any order) run SQL built once per shape; the
    rest (text and date filters) build theirs per request."""
    if (f.org_name or f.search or f.day_from or f.day_to or f.authenticity
            or len(f.domains or ()) > COMPILED_DOMAINS):
        rows = raw_rows(report_page(org_id, f).limit(limit).offset(offset))
        return [SummaryRow._make(row) for row in rows]
    shape = (f.result, bool(f.source_ip), None if f.domains is None else len(f.domains),
             f.sort_by, f.descending)
    compiled = _PAGES.get(shape)
    if compiled is None:
        compiled = _PAGES[shape] = Compiled(lambda **marks: _shaped_page(f, **marks))
    values = {"org": org_id, "limit": limit, "offset": offset}
    if f.source_ip:
        values["ip"] = f.source_ip
    values.update((f"d{i}", name) for i, name in enumerate(f.domains or ()))
    return [SummaryRow._make(row) for row in compiled.run(**values)]


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
        # Written exactly as SQLite's partial index's condition (store/migrations.py).
        cond &= Report.compliant_messages < Report.total_messages
    if f.authenticity is not None:
        cond &= Report.authenticity == f.authenticity
    if f.day_from is not None:
        cond &= Report.day_begin >= f.day_from
    if f.day_to is not None:
        # day_end <= to implies the window ended by the next midnight: a range on date_end.
        cond &= (Report.day_end <= f.day_to) & (Report.date_end <= _midnight(f.day_to + ONE_DAY))
    if f.source_ip:
        holding = (Record.select(Record.report)
                   .where((Record.org == org_id) & (Record.source_ip == f.source_ip)))
        # A pruned report's records are gone; its addresses were kept.
        pruned = (PrunedAddress.select(PrunedAddress.report)
                  .where((PrunedAddress.org == org_id) & (PrunedAddress.source_ip == f.source_ip)))
        cond &= Report.id.in_(holding | pruned)
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
                  Report.discovery_method, Report.parse_warnings, Report.failure_summary,
                  Report.records_pruned_at, Report.authenticity, Report.signed_by,
                  Report.authenticity_reason)
RECORD_COLUMNS = (Record.source_ip, Record.count, Record.disposition, Record.dkim, Record.spf,
                  Record.reasons, Record.envelope_to, Record.envelope_from, Record.header_from,
                  Record.auth_dkim, Record.auth_spf, Record.alignment, Record.classification)
# What enrichment knows of the sender, which the record's evidence names (NULL: no Source row).
SENDER_COLUMNS = (Source.service_slug, Source.service_kind, Source.abuse_status,
                  Source.service_name)


class DetailRow(NamedTuple):
    """A row of DETAIL_COLUMNS; JSON columns as their stored text."""
    version: str
    org_name: str
    email: str
    extra_contact_info: str
    report_id: str
    date_begin: int
    date_end: int
    errors: str | None
    generator: str
    domain: str
    adkim: str
    aspf: str
    p: str
    sp: str
    np: str
    pct: int | None
    fo: str
    testing: str
    psd: str
    discovery_method: str
    parse_warnings: str | None
    failure_summary: str | None
    records_pruned_at: object          # when retention deleted the records, or None
    authenticity: str                  # what the report's mail proves, the signing domain, why
    signed_by: str
    authenticity_reason: str


class SenderRow(NamedTuple):
    """A record's Source row as its evidence reads it (every field None: no row)."""
    slug: str | None
    kind: str | None
    abuse_status: str | None
    name: str | None


class RecordWithSender(NamedTuple):
    """A row of RECORD_COLUMNS with its sender; JSON columns as their stored text."""
    source_ip: str
    count: int
    disposition: str
    dkim: str
    spf: str
    reasons: str | None
    envelope_to: str
    envelope_from: str
    header_from: str
    auth_dkim: str | None
    auth_spf: str | None
    alignment: str | None
    classification: str
    sender: SenderRow
_REPORT = Compiled(lambda id, org: Report.select(*DETAIL_COLUMNS)
                   .where((Report.id == id) & (Report.org == org)))
# Records are read this many at a time: a worker holds a page, never a whole large report.
RECORDS_PAGE = 1000
_RECORD_PAGE = Compiled(lambda id, org, after, size: Record.select(Record.ordinal, *RECORD_COLUMNS,
                                                                    *SENDER_COLUMNS)
                        .join(Source, JOIN.LEFT_OUTER,
                              on=(Source.org == Record.org) & (Source.ip == Record.source_ip))
                        .where((Record.report == id) & (Record.org == org)
                               & (Record.ordinal > after))
                        .order_by(Record.ordinal).limit(size))


def report(org_id: str, report_id: str) -> DetailRow | None:
    """The report with this canonical id in the org, or None."""
    rows = _REPORT.run(id=report_id, org=org_id)
    if not rows:
        return None
    return DetailRow._make(rows[0])


class RecordPages:
    """The report's records (RecordRows, in the reporter's order) page by page,
    each page read when reached; iterable again (the first page is kept, so a report of one
    page costs one query however often it is walked)."""

    def __init__(self, org_id: str, report_id: str, size: int = RECORDS_PAGE):
        self.org_id, self.report_id, self.size = org_id, report_id, size
        self.first, self.after_first = self._page(-1)

    @property
    def single(self) -> bool:
        """The report's records are all in the first page."""
        return self.after_first is None

    def _page(self, after: int) -> tuple[list[RecordWithSender], int | None]:
        """(the page's records, the ordinal to read on from; None after the last page)."""
        rows = _RECORD_PAGE.run(id=self.report_id, org=self.org_id, after=after, size=self.size)
        more = rows[-1][0] if len(rows) == self.size else None
        width = len(RECORD_COLUMNS)
        records = [RecordWithSender(*row[1:width + 1], SenderRow._make(row[width + 1:]))
                   for row in rows]
        return _respelled(self.org_id, records), more

    def __iter__(self):
        page, after = self.first, self.after_first
        yield page
        while after is not None:
            page, after = self._page(after)
            yield page


def _respelled(org_id: str, rows: list[RecordWithSender]) -> list[RecordWithSender]:
    """Rows with their Source row's columns; a record giving another spelling of its address
    is matched by its canonical text, in one more query and only when there is one."""
    canonical = {row.source_ip: canonical_ip(row.source_ip) for row in rows
                 if row.sender.slug is None}
    respelled = {ip: text for ip, text in canonical.items() if text != ip}
    if not respelled:
        return rows
    wanted = sorted(set(respelled.values()))
    found_rows = rows_among((Source.ip, *SENDER_COLUMNS), Source.org, org_id, Source.ip, wanted)
    known = {ip: SenderRow._make(rest) for ip, *rest in found_rows}
    found = []
    for row in rows:
        text = respelled.get(row.source_ip)
        if text in known:
            row = row._replace(sender=known[text])
        found.append(row)
    return found


def verified_messages(org_id: str, first: date, last: date,
                      name: str | None = None) -> dict[str, int]:
    """Messages of the org's reports (of one domain, if named) whose mail is verified, by
    domain, counting each report on its rollup day (its window's middle) from first to last."""
    middle = (Report.date_begin + Report.date_end) / 2
    since, until = _midnight(first), _midnight(last + ONE_DAY)
    query = (Report.select(Report.domain, fn.SUM(Report.total_messages))
             .where((Report.org == org_id) & (Report.authenticity == "verified")
                    & (Report.date_end >= since) & (middle >= since) & (middle < until))
             .group_by(Report.domain))
    if name is not None:
        query = query.where(Report.domain == name)
    return {domain: int(total or 0) for domain, total in query.tuples()}


def report_date_range(org_id: str) -> tuple[date | None, date | None]:
    # A report dated before DMARC existed (a reporter's clock at 0) would stretch the range.
    dated = Report.select().where(Report.org == org_id, Report.day_begin >= FIRST_REPORT_DAY)
    earliest = dated.select(fn.MIN(Report.day_begin)).scalar()
    latest = dated.select(fn.MAX(Report.day_end)).scalar()
    return stored_date(earliest), stored_date(latest)

