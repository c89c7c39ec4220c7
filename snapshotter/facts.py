"""Read what an organization's blobs are computed from: day totals, policies, senders, items."""
from __future__ import annotations

from datetime import date, timedelta

from peewee import fn

from rules.snapshot_facts import (EVENT_SEVERITY, TREND_DAYS, WINDOW_DAYS, ActionItem, DomainFacts,
                                  OrgFacts, PublishedPolicy, TopSender, SpanTally, TlsTally)
from snapshotter import day_totals, dns
from store import db, report_queries, snapshots
from store.clock import stored_date
from store.models import DailyRollup, Domain, DomainDay, Event, Source, TlsDay

# A year of trends plus the scoring window before its first day (back-filled history).
HORIZON_DAYS = TREND_DAYS + WINDOW_DAYS
SENDERS_KEPT = 25



def read(org_id: str, today: date, report_address: str = ""):
    """(facts as of today, the refreshed day-totals cache or None if unchanged, days summed)."""
    facts = OrgFacts(today=today, report_address=report_address)
    first = today - timedelta(days=HORIZON_DAYS - 1)
    counts, policies = _domain_days(org_id, first)
    cached_blob = snapshots.get(org_id, day_totals.CACHE_KIND)
    cached = day_totals.load(cached_blob.body if cached_blob else None)
    totals, summed = day_totals.refresh(org_id, counts, cached)
    _add_domains(org_id, facts)
    for (name, day), sums in totals.items():
        d = facts.domains.setdefault(name, DomainFacts(name, monitored=False))
        d.days[day] = span_tally(sums)
    for name, entries in policies.items():
        facts.domains[name].policies = sorted(entries, key=lambda e: e[0])
    _add_last_reports(org_id, facts, first)
    _add_senders(org_id, facts)
    _add_items(org_id, facts)
    _add_tls(org_id, facts, first)
    _add_verified(org_id, facts)
    changed = summed or len(totals) != len(cached)
    return facts, (day_totals.dump(totals) if changed else None), summed


def span_tally(sums) -> SpanTally:
    """A day's sums as the day-totals cache keeps them (reports first), by name."""
    reports, messages, compliant, spf_aligned_pass, dkim_aligned_pass, forwarded = sums
    return SpanTally(messages=messages, compliant=compliant, spf_aligned_pass=spf_aligned_pass,
                     dkim_aligned_pass=dkim_aligned_pass, forwarded=forwarded, reports=reports)


def read_domain(org_id: str, name: str, today: date, report_address: str = "") -> OrgFacts:
    """The facts of one domain alone (its days summed from its own rollups, no shared cache):
    what one domain's body needs, at a cost that does not grow with the organization."""
    facts = OrgFacts(today=today, report_address=report_address)
    first = today - timedelta(days=HORIZON_DAYS - 1)
    counts, policies = _domain_days(org_id, first, name)
    totals, _ = day_totals.refresh(org_id, counts, {})
    _add_domains(org_id, facts, name)
    d = facts.domains.setdefault(name, DomainFacts(name, monitored=False))
    for (_, day), sums in totals.items():
        d.days[day] = span_tally(sums)
    d.policies = sorted(policies.get(name, []), key=lambda e: e[0])
    _add_last_reports(org_id, facts, first, name)
    _add_senders(org_id, facts, name)
    _add_items(org_id, facts, name)
    _add_tls(org_id, facts, first, name)
    _add_verified(org_id, facts, name)
    return facts


def _add_verified(org_id: str, facts: OrgFacts, name: str | None = None) -> None:
    """Each domain's messages in the scoring window that verified reports account for."""
    first = facts.today - timedelta(days=WINDOW_DAYS - 1)
    verified = report_queries.verified_messages(org_id, first, facts.today, name)
    for domain, messages in verified.items():
        if domain in facts.domains:
            facts.domains[domain].verified_messages = messages


def _domain_days(org_id: str, first: date, name: str | None = None):
    counts, policies, days = {}, {}, {}
    query = (DomainDay.select(DomainDay.domain, DomainDay.day, DomainDay.reports,
                              DomainDay.policy_p, DomainDay.policy_pct, DomainDay.policy_testing)
             .where(DomainDay.org == org_id, DomainDay.day >= first)
             .order_by(DomainDay.domain, DomainDay.day))
    if name is not None:
        query = query.where(DomainDay.domain == name)
    # Raw rows: peewee's per-value conversion costs more than the query at a year of domain-days.
    last = {}
    for name, day, reports, p, pct, testing in _raw(query):
        day = days.get(day) or days.setdefault(day, stored_date(day))
        counts[(name, day)] = reports
        if last.get(name) != (p, pct, testing):       # keep the days the policy changed
            last[name] = (p, pct, testing)
            policy = PublishedPolicy(p or "", pct, testing or "")
            policies.setdefault(name, []).append((day, policy))
    return counts, policies


def _raw(query):
    return db.execute_sql(*query.sql()).fetchall()


def _add_domains(org_id: str, facts: OrgFacts, name: str | None = None):
    query = (Domain.select(Domain.name, Domain.verified_source, Domain.inherited_from, Domain.dns)
             .where(Domain.org == org_id).tuples())
    if name is not None:
        query = query.where(Domain.name == name)
    for name, verified_source, inherited_from, dns_found in query:
        # The parent whose DMARC record applies, whether or not it reports to us.
        facts.domains[name] = DomainFacts(
            name, monitored=True, dns=dns_found,
            inherited_from=inherited_from if verified_source == "inherited"
            else dns.record_parent(dns_found))


def _add_last_reports(org_id: str, facts: OrgFacts, first: date, name: str | None = None):
    """Last report day per domain; the policy of domains quiet since before `first`."""
    for d in facts.domains.values():
        if d.days:
            d.last_report_day = max(d.days)
    query = (DomainDay.select(DomainDay.domain, fn.MAX(DomainDay.day))
             .where(DomainDay.org == org_id, DomainDay.day < first)
             .group_by(DomainDay.domain).tuples())
    if name is not None:
        query = query.where(DomainDay.domain == name)
    for name, last in query:
        d = facts.domains.setdefault(name, DomainFacts(name, monitored=False))
        if d.last_report_day is None:
            d.last_report_day = stored_date(last)
            row = DomainDay.get(DomainDay.org == org_id, DomainDay.domain == name,
                                DomainDay.day == d.last_report_day)
            d.policies = [(d.last_report_day, PublishedPolicy(row.policy_p or "", row.policy_pct,
                                                     row.policy_testing or ""))]


def _add_tls(org_id: str, facts: OrgFacts, first: date, name: str | None = None):
    """The TLS report days (TlsDay rollups) of the domains already known, from `first` on."""
    query = (TlsDay.select(TlsDay.domain, TlsDay.day, TlsDay.successful_sessions,
                           TlsDay.failed_sessions, TlsDay.reports, TlsDay.failures,
                           TlsDay.policy_types)
             .where(TlsDay.org == org_id, TlsDay.day >= first))
    if name is not None:
        query = query.where(TlsDay.domain == name)
    for row in query:
        d = facts.domains.get(row.domain)
        if d is not None:
            d.tls_days[stored_date(row.day)] = TlsTally(
                row.successful_sessions, row.failed_sessions, row.reports,
                tuple(sorted((row.failures or {}).items())), tuple(row.policy_types or ()))


def _add_senders(org_id: str, facts: OrgFacts, name: str | None = None):
    """Busiest source IPs per domain in the scoring window, and the window's distinct IPs."""
    first = facts.today - timedelta(days=WINDOW_DAYS - 1)
    query = (DailyRollup.select(DailyRollup.domain, DailyRollup.source_ip,
                                fn.SUM(DailyRollup.messages), fn.SUM(DailyRollup.spf_aligned_pass),
                                fn.SUM(DailyRollup.dkim_aligned_pass))
             .where(DailyRollup.org == org_id, DailyRollup.day.between(first, facts.today))
             .group_by(DailyRollup.domain, DailyRollup.source_ip))
    if name is not None:
        query = query.where(DailyRollup.domain == name)
    by_domain, ips = {}, set()
    for name, ip, messages, spf, dkim in _raw(query):
        ips.add(ip)
        row = (int(messages or 0), ip, int(spf or 0), int(dkim or 0))
        by_domain.setdefault(name, []).append(row)
    facts.unique_ips = len(ips)
    kept = {name: sorted(rows, key=lambda r: (-r[0], r[1]))[:SENDERS_KEPT]
            for name, rows in by_domain.items()}
    wanted = sorted({row[1] for rows in kept.values() for row in rows})
    services = {}
    for start in range(0, len(wanted), 500):
        query = (Source.select(Source.ip, Source.service_name, Source.service_slug,
                               Source.service_icon)
                 .where(Source.org == org_id, Source.ip.in_(wanted[start:start + 500])).tuples())
        services.update((ip, rest) for ip, *rest in query)
    for name, rows in kept.items():
        d = facts.domains.setdefault(name, DomainFacts(name, monitored=False))
        d.senders = [TopSender(ip, messages, spf, dkim, *services.get(ip, (None, None, None)))
                     for messages, ip, spf, dkim in rows]


def reload_items(org_id: str, facts: OrgFacts):
    """Read the open items again (after conditions raised or cleared events)."""
    facts.org_items.clear()
    for d in facts.domains.values():
        d.items.clear()
    _add_items(org_id, facts)


def _add_items(org_id: str, facts: OrgFacts, name: str | None = None):
    """Open events (not acknowledged, not cleared) become action items, newest first."""
    query = (Event.select(Event.type, Event.severity, Event.title, Event.detail, Event.link,
                          Event.domain, Event.dedupe_key)
             .where(Event.org == org_id, Event.acknowledged == False,  # noqa: E712 (SQL)
                    Event.cleared_at.is_null())
             .order_by(Event.created_at.desc(), Event.id.desc()).tuples())
    if name is not None:
        query = query.where(Event.domain == name)
    for type_, severity, title, detail, link, name, key in query:
        item = ActionItem(type_, EVENT_SEVERITY.get(severity, "low"), title, detail or title,
                          link, "Open" if link else None, dns.event_kind(type_, key))
        if name and name in facts.domains:
            facts.domains[name].items.append(item)
        else:
            facts.org_items.append(item)
