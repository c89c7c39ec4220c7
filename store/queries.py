"""Read queries the API pages over (domains, statistics, sources, the report version); the
report list and detail are in store/report_queries.py. Every query is scoped to one organization."""
from __future__ import annotations

from peewee import fn

from store import db
from store.compiled import run_named
from store.models import DailyRollup, Domain, DomainDay, Source


def report_version(org_id: str) -> int:
    """A number that moves whenever a DMARC report is stored for the org or taken out
    (Organization.report_version); 0 until the first. The key of every remembered total
    (webapp/answer_cache.py)."""
    row = run_named(db.obj, VERSION_STATEMENT, {"org": org_id}).fetchone()
    return int(row[0] or 0) if row else 0


# With one :org value; others read it beside their own in one statement.
VERSION_STATEMENT = 'SELECT "report_version" FROM "organization" WHERE "id" = :org'


def domain_page(org_id: str):
    """The org's monitored domains by name."""
    return Domain.select().where(Domain.org == org_id).order_by(Domain.name, Domain.id)


def report_counts(org_id: str) -> dict[str, int]:
    """Reports held per policy domain (exactly that domain)."""
    rows = (DomainDay.select(DomainDay.domain, fn.SUM(DomainDay.reports))
            .where(DomainDay.org == org_id).group_by(DomainDay.domain).tuples())
    return {domain: int(count) for domain, count in rows}


def statistics(org_id: str, domain: str | None = None) -> dict:
    """All-time totals from the rollups (never the report table), optionally for one domain."""
    days = DomainDay.select(fn.COALESCE(fn.SUM(DomainDay.reports), 0)).where(DomainDay.org == org_id)
    rollup = DailyRollup.select(
        fn.COALESCE(fn.SUM(DailyRollup.messages), 0), fn.COALESCE(fn.SUM(DailyRollup.compliant), 0),
        fn.COUNT(DailyRollup.source_ip.distinct()), fn.COUNT(DailyRollup.domain.distinct()),
    ).where(DailyRollup.org == org_id)
    if domain is not None:
        days = days.where(DomainDay.domain == domain)
        rollup = rollup.where(DailyRollup.domain == domain)
    messages, compliant, ips, domains = rollup.tuples().first()
    return {"total_reports": int(days.scalar() or 0), "total_messages": int(messages),
            "compliant_messages": int(compliant), "unique_source_ips": ips,
            "unique_domains": domains}


def top_sources(org_id: str, domain: str | None = None):
    """Every source IP: (ip, messages, compliant, spf_fail, dkim_fail), highest volume first."""
    messages = fn.SUM(DailyRollup.messages)
    query = (DailyRollup
             .select(DailyRollup.source_ip, messages.alias("count"),
                     fn.SUM(DailyRollup.compliant).alias("pass"),
                     (messages - fn.SUM(DailyRollup.spf_aligned_pass)).alias("spf_fail"),
                     (messages - fn.SUM(DailyRollup.dkim_aligned_pass)).alias("dkim_fail"))
             .where(DailyRollup.org == org_id))
    if domain is not None:
        query = query.where(DailyRollup.domain == domain)
    return list(query.group_by(DailyRollup.source_ip)
                .order_by(messages.desc(), DailyRollup.source_ip).tuples())


def source_services(org_id: str, ips) -> dict[str, tuple]:
    """Known senders of the given IPs: ip → (service_name, service_icon, service_slug)."""
    if not ips:
        return {}
    rows = (Source.select(Source.ip, Source.service_name, Source.service_icon, Source.service_slug)
            .where((Source.org == org_id) & Source.ip.in_(list(ips))
                   & Source.service_name.is_null(False)).tuples())
    return {ip: rest for ip, *rest in rows}
