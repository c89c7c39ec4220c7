"""Read queries of GET /sources and /sources/{ip}, scoped to one organization.

The list reads Source rows (their totals kept by ingest), or with a domain filter that domain's
SourceDomain rows beside their Source; every sort ends with the row id. SQLite has an index per
sort; Postgres leaves the totals ingest changes with every report unindexed, so there their sorts
order the organization's rows (store/migrations.py, SOURCE_SORT_INDEXES).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from peewee import fn

from store import compiled as sql
from store import db, is_postgres, queries
from store.models import DailyRollup, Source, SourceDomain

SORTS = ("total_messages", "source_ip", "first_seen", "last_seen", "compliance",
         "auth_failures", "domains")
REPUTATIONS = ("clean", "suspicious", "malicious", "unknown")
ROW_FIELDS = (Source.id, Source.ip, Source.ptr, Source.service_name, Source.service_slug,
              Source.service_icon, Source.abuse_status, Source.authorized, Source.country)


@dataclass(frozen=True)
class SourceFilter:
    domain: str | None = None
    search: str | None = None
    reputation: str | None = None
    has_failures: bool | None = None
    sort_by: str = "total_messages"
    descending: bool = True


def _figures(table):
    """The figure columns of a row, from Source or SourceDomain."""
    return (table.messages, table.compliant, table.spf_fail, table.dkim_fail, table.first_seen,
            table.last_seen)


def _sort_key(wanted: SourceFilter, table):
    if wanted.sort_by == "source_ip":
        return Source.ip_key
    if wanted.sort_by == "domains":
        return Source.domain_count
    if table is Source:
        return {"total_messages": Source.messages, "first_seen": Source.first_seen,
                "last_seen": Source.last_seen, "compliance": Source.compliance_rate,
                "auth_failures": Source.auth_failures}[wanted.sort_by]
    return {"total_messages": SourceDomain.messages, "first_seen": SourceDomain.first_seen,
            "last_seen": SourceDomain.last_seen,
            "compliance": SourceDomain.compliant * 1.0 / SourceDomain.messages,
            "auth_failures": SourceDomain.spf_fail + SourceDomain.dkim_fail}[wanted.sort_by]


def _query(org_id: str, wanted: SourceFilter, counting: bool = False):
    """The filtered query and the table its figures come from (Source, or with a domain
    filter SourceDomain, joined to Source unless only counted by its own columns)."""
    if wanted.domain is None:
        table, query, cond = Source, Source.select(), Source.org == org_id
    else:
        table, query = SourceDomain, SourceDomain.select()
        cond = (SourceDomain.org == org_id) & (SourceDomain.domain == wanted.domain)
        if not counting or wanted.reputation is not None or wanted.search:
            query = query.join(Source, on=((Source.org == SourceDomain.org)
                                           & (Source.ip == SourceDomain.ip)))
    if wanted.reputation is not None:
        cond &= Source.abuse_status == wanted.reputation
    if wanted.has_failures is not None:
        failures = Source.auth_failures if table is Source else (
            SourceDomain.spf_fail + SourceDomain.dkim_fail)
        cond &= (failures > 0) if wanted.has_failures else (failures == 0)
    if wanted.search:
        # contains() is a case-insensitive LIKE with the term's wildcards escaped.
        cond &= Source.search_text.contains(wanted.search.lower())
    return query.where(cond), table


def source_rows(org_id: str, wanted: SourceFilter, limit: int, offset: int) -> list[tuple]:
    """A page of rows: ROW_FIELDS, the figures (Source's, or the filtered domain's), as the
    driver gives them but for the two times, then the domains the IP sent for, by name.

    Without a search, the SQL is built once per shape (filters present, sort); a search's
    pattern is built per request."""
    values = {"org": org_id, "limit": limit, "offset": offset}
    if wanted.search:
        rows = sql.raw_rows(_page(org_id, wanted, limit, offset))
    else:
        shape = (wanted.domain is not None, wanted.reputation is not None, wanted.has_failures,
                 wanted.sort_by, wanted.descending)
        compiled = _PAGES.get(shape)
        if compiled is None:
            compiled = _PAGES[shape] = sql.Compiled(lambda **marks: _marked_page(wanted, **marks))
        if wanted.domain is not None:
            values["domain"] = wanted.domain
        if wanted.reputation is not None:
            values["reputation"] = wanted.reputation
        rows = compiled.run(**values)
    first, last = Source.first_seen.python_value, Source.last_seen.python_value
    return [(*row[:-3], first(row[-3]), last(row[-2]), sorted((row[-1] or "").split()))
            for row in rows]


_PAGES: dict[tuple, sql.Compiled] = {}


def _domains():
    """The domains a page row's IP sent for, joined by spaces (a name has none), read in the
    page's own statement: apart, they were a second round trip of every page."""
    sent = SourceDomain.alias("sent")
    joined = (fn.string_agg(sent.domain, " ") if is_postgres()
              else fn.group_concat(sent.domain, " "))
    return (sent.select(joined)
            .where((sent.org == Source.org) & (sent.ip == Source.ip)))


def _marked_page(wanted: SourceFilter, org, limit, offset, domain=None, reputation=None):
    return _page(org, replace(wanted, domain=domain, reputation=reputation), limit, offset)


def _page(org_id: str, wanted: SourceFilter, limit, offset):
    query, table = _query(org_id, wanted)
    query = query.select(*ROW_FIELDS, *_figures(table), _domains())
    key = _sort_key(wanted, table)
    # The tie-break is the id of the rows paged over, so an index on the sort serves the page.
    order = ((key.desc(), table.id.desc()) if wanted.descending
             else (key.asc(), table.id.asc()))
    return query.order_by(*order).limit(limit).offset(offset)


def source_count(org_id: str, wanted: SourceFilter) -> int:
    query, table = _query(org_id, wanted, counting=True)
    return query.select(table.id).count()


def count_stamp(org_id: str) -> tuple[int, object]:
    """(the org's report version, its latest enrichment as the driver gives it) in one
    statement: a filter's total is remembered while both hold, as the enrichment moves whenever
    a source's reputation or search text can have changed without a report being stored (one
    probe of the (org, enriched_at) index)."""
    statement = f"SELECT ({queries.VERSION_STATEMENT}), ({_LAST_ENRICHED})"
    version, enriched = sql.run_named(db.obj, statement, {"org": org_id}).fetchone()
    return int(version or 0), enriched


_LAST_ENRICHED = 'SELECT MAX("enriched_at") FROM "source" WHERE "org_id" = :org'


def any_source(org_id: str) -> bool:
    return Source.select(Source.id).where(Source.org == org_id).exists()


def source(org_id: str, ip: str) -> Source | None:
    return Source.get_or_none(Source.org == org_id, Source.ip == ip)


def source_domains(org_id: str, ip: str) -> list[SourceDomain]:
    """The source's per-domain rows, busiest first."""
    return list(SourceDomain.select()
                .where(SourceDomain.org == org_id, SourceDomain.ip == ip)
                .order_by(SourceDomain.messages.desc(), SourceDomain.domain))


def timeline(org_id: str, ip: str) -> list[tuple]:
    """(day, messages, compliant) per UTC day of the rollups, oldest first."""
    return list(DailyRollup
                .select(DailyRollup.day, fn.SUM(DailyRollup.messages),
                        fn.SUM(DailyRollup.compliant))
                .where(DailyRollup.org == org_id, DailyRollup.source_ip == ip)
                .group_by(DailyRollup.day).order_by(DailyRollup.day).tuples())



def enrichment(org_id: str, ips: list[str]) -> list[tuple]:
    """(ip, service kind, abuse status) of the organization's Source rows among ips, as ingest
    classifies records."""
    fields = (Source.ip, Source.service_kind, Source.abuse_status)
    return sql.rows_among(fields, Source.org, org_id, Source.ip, ips)
