"""Read queries of GET /sources and /sources/{ip}, scoped to one organization.

The list reads Source rows (their totals kept by ingest), or with a domain filter that domain's
SourceDomain rows beside their Source; every sort ends with the row id. SQLite has an index per
sort; Postgres leaves the totals ingest changes with every report unindexed, so there their sorts
order the organization's rows (store/migrations.py, SOURCE_SORT_INDEXES).
"""
from __future__ import annotations

from dataclasses import dataclass

from peewee import fn

from store import compiled as sql
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
    """A page of rows: ROW_FIELDS then the figures (Source's, or the filtered domain's)."""
    query, table = _query(org_id, wanted)
    query = query.select(*ROW_FIELDS, *_figures(table))
    key = _sort_key(wanted, table)
    # The tie-break is the id of the rows paged over, so an index on the sort serves the page.
    order = ((key.desc(), table.id.desc()) if wanted.descending
             else (key.asc(), table.id.asc()))
    return list(query.order_by(*order).limit(limit).offset(offset).tuples())


def source_count(org_id: str, wanted: SourceFilter) -> int:
    query, table = _query(org_id, wanted, counting=True)
    return query.select(table.id).count()


def last_enriched_at(org_id: str):
    """The org's latest enrichment: moves whenever a source's reputation or search text can
    have changed without a report being stored (one probe of the (org, enriched_at) index)."""
    return Source.select(fn.MAX(Source.enriched_at)).where(Source.org == org_id).scalar()


def any_source(org_id: str) -> bool:
    return Source.select(Source.id).where(Source.org == org_id).exists()


def domains_of(org_id: str, ips) -> dict[str, list[str]]:
    """The domains each IP sent for, by name."""
    found: dict[str, list[str]] = {ip: [] for ip in ips}
    if not found:
        return found
    # Sorted here: an ORDER BY domain would lead SQLite to the (org, domain, ip) index.
    rows = sql.rows_among((SourceDomain.ip, SourceDomain.domain), SourceDomain.org, org_id,
                          SourceDomain.ip, list(found))
    for ip, domain in sorted(rows):
        found[ip].append(domain)
    return found


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
