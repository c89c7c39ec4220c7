"""Raise and clear the report- and time-driven events (snapshotter/conditions.py) of an org.

Evaluated by every refresh of an organization, from the facts it has just read: ingest marks an
organization dirty, so its report-driven conditions are judged within a minute of a report
(one pass per organization, not one per report, and with the day totals a refresh reads
anyway), and the hourly health job and the job at each hour's start (`conditions`) judge the
time-driven ones (no_reports, a policy change's news running out, quota hours ended) while no
report arrives. Every rule is a level over stored data, so judging twice changes nothing.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from rules.snapshot_facts import OrgFacts
from snapshotter import conditions, tls
from store import events
from store.event_types import EXPIRING, Outcome
from store.clock import to_epoch
from store.models import Event, Report

# Parse warnings are judged on reports about the last days (an index covers date_end): an
# archive of old reports imported today raises none, and an event whose reporter has sent
# nothing since expires with the news (conditions.NEWS_DAYS).
WARNINGS_HORIZON_DAYS = conditions.NEWS_DAYS + 3


def apply(org_id: str, facts: OrgFacts, now: datetime, *, mark: bool = True) -> bool:
    """Raise and clear the organization's conditions as of `now`; True when any event changed.
    mark=False: the calling refresh shows the change itself, so the organization stays clean."""
    open_events = {k: (t, created) for k, t, created in (
        Event.select(Event.dedupe_key, Event.type, Event.created_at)
        .where(Event.org == org_id, Event.cleared_at.is_null()).tuples())}
    outcome = Outcome()
    for d in facts.domains.values():
        outcome.add(conditions.domain_outcome(d.name, d.days, d.policies, d.last_report_day,
                                              facts.today))
        outcome.add(conditions.Outcome(*tls.tls_failures(d.name, d.tls_days, facts.today)))
    outcome.add(_parse_warnings(org_id, now, open_events))
    outcome.cleared += [k for k, (type_, created) in open_events.items()
                        if type_ in EXPIRING and conditions.expired(created, now)]
    outcome.cleared += conditions.quota_hours_ended(list(open_events), to_epoch(now))
    return events.apply(org_id, outcome, now, open_now=set(open_events), mark=mark)


def _parse_warnings(org_id: str, now: datetime, open_events: dict) -> Outcome:
    """The newest report per reporter and domain, judged against the events open for them."""
    since = to_epoch(now - timedelta(days=WARNINGS_HORIZON_DAYS))
    rows = (Report.select(Report.domain, Report.org_name, Report.received_at, Report.id,
                          Report.parse_warnings)
            .where(Report.org == org_id, Report.date_end >= since).tuples())
    newest: dict[tuple[str, str], tuple] = {}
    for domain, reporter, received_at, report_id, warnings in rows:
        seen = newest.get((domain, reporter))
        if seen is None or (received_at, report_id) > seen[:2]:
            newest[(domain, reporter)] = (received_at, report_id, warnings)
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    today = {k for (k,) in Event.select(Event.dedupe_key)
             .where(Event.org == org_id, Event.type == "report_parse_warnings",
                    Event.created_at >= start_of_day).tuples()}
    by_prefix: dict[str, set[str]] = {}       # open keys per reporter and domain
    for k, (type_, _) in open_events.items():
        if type_ == "report_parse_warnings":
            by_prefix.setdefault(k[:k.rindex(":") + 1], set()).add(k)
    outcome = Outcome()
    for (domain, reporter), (received_at, _, warnings) in newest.items():
        mine = by_prefix.get(conditions.parse_warnings_prefix(domain, reporter), set())
        outcome.add(conditions.parse_warnings(
            conditions.Latest(domain, reporter, received_at, len(warnings or [])), mine, today))
    return outcome


def quota_hours(now: datetime) -> int:
    """Close every organization's quota_near_cap events whose hour is over (the hourly job)."""
    rows = (Event.select(Event.org, Event.dedupe_key)
            .where(Event.type == "quota_near_cap", Event.cleared_at.is_null()).tuples())
    by_org: dict[str, list[str]] = {}
    for org_id, k in rows:
        by_org.setdefault(org_id, []).append(k)
    return sum(events.clear(org_id, conditions.quota_hours_ended(keys, to_epoch(now)), now)
               for org_id, keys in by_org.items())
