"""Source facts: each sending IP's totals per organization (Source) and per policy domain
(SourceDomain), added to in the transaction of the reports they sum, beside the daily rollups.

Only a stored report reaches here (a duplicate never does), so the sums are exact. A commit
group's sums are folded per row in memory (ingest/shared_rows.py) and written by two multi-row
upserts per 500 rows, which add to existing rows; SourceDomain's RETURNING says which (domain, IP)
pairs the group made (their `reports` is the group's own), which is what Source's domain count
and the new_sender events (raised in one insert per report) need.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from peewee import EXCLUDED, Case, fn

from rules.rates import percentage
from store import compiled as sql
from store import events
from store.addresses import SEARCH_LENGTH, ip_key, remember_spellings, search_text
from store.models import DomainDay, Source, SourceDomain

NEW_SENDER_HISTORY = timedelta(days=7)   # a domain needs this much history before a sender is new
NEW_SENDER_RECENT = timedelta(days=7)    # news only: a report that ended longer ago is history
NEW_SENDER_EVENTS = 10                   # per report at most (its busiest new senders)


@dataclass
class SenderSums:
    """One IP's sums for one policy domain over a group's reports; `news` is the first of them
    to hold it (its number in the group, its messages there): the report that made the pair,
    when the group did."""
    first: datetime
    last: datetime
    sums: list[int]          # messages, compliant, SPF pass, DKIM pass, forwarded
    held: list[int]          # quarantined, rejected
    reports: int
    news: tuple[int, int]

    @classmethod
    def of(cls, first: datetime, last: datetime, sums, held, report: int) -> "SenderSums":
        return cls(first, last, list(sums), list(held), 1, (report, sums[0]))

    def add(self, first: datetime, last: datetime, sums, held) -> None:
        self.first, self.last = min(self.first, first), max(self.last, last)
        self.sums = [a + b for a, b in zip(self.sums, sums)]
        self.held = [a + b for a, b in zip(self.held, held)]
        self.reports += 1


def save(senders: dict[tuple, SenderSums], spelled: dict[str, dict[str, set[str]]],
         reports: list) -> None:
    """Add a group's sums ({(org, domain, ip): SenderSums}) to the source facts; spelled: each
    organization's other texts of its addresses; reports: the group's stored reports (each with
    org_id, domain, day, last and received_at), whose new senders make news."""
    keys = sorted(senders)
    made = set()
    for start in range(0, len(keys), sql.BATCH):
        made.update(_save_domains(senders, keys[start:start + sql.BATCH]))
    by_source: dict[tuple, list] = {}
    for org_id, domain, ip in keys:
        by_source.setdefault((org_id, ip), []).append(domain)
    sources = sorted(by_source)
    for start in range(0, len(sources), sql.BATCH):
        _save_sources(senders, sources[start:start + sql.BATCH], by_source, made)
    for org_id in sorted(spelled):
        remember_spellings(org_id, spelled[org_id])
    news: dict[int, list] = {}
    for org_id, domain, ip in made:
        report, messages = senders[(org_id, domain, ip)].news
        news.setdefault(report, []).append((-messages, ip))
    for number in sorted(news):
        report = reports[number]
        # An archive of old reports imported today makes no news: new_sender is about the last
        # days.
        if report.received_at - report.last <= NEW_SENDER_RECENT:
            _announce(report.org_id, report.domain, report.day,
                      [ip for _, ip in sorted(news[number])])


def _save_domains(senders, keys) -> list[tuple]:
    """Upsert the keys' SourceDomain rows; the (org, domain, ip) keys whose row this group
    created."""
    rows = []
    for key in keys:
        sender = senders[key]
        messages, compliant, spf_pass, dkim_pass, forwarded = sender.sums
        rows.append((*key, _stored_time(sender.first), _stored_time(sender.last), messages,
                     compliant, messages - spf_pass, messages - dkim_pass, forwarded,
                     *sender.held, sender.reports))
    return [(org_id, domain, ip) for org_id, domain, ip, reports in _DOMAINS.run(rows)
            if reports == senders[(org_id, domain, ip)].reports]


def _save_sources(senders, sources, by_source, made: set) -> None:
    """Upsert the (org, ip) sources' rows: the sums of their domains' rows, and how many of
    those rows the group made (the domains a source's search text gains)."""
    rows = []
    for org_id, ip in sources:
        domains = by_source[(org_id, ip)]
        new = [domain for domain in domains if (org_id, domain, ip) in made]
        parts = [senders[(org_id, domain, ip)] for domain in domains]
        first, last = min(p.first for p in parts), max(p.last for p in parts)
        messages, compliant, spf_pass, dkim_pass, forwarded = (
            sum(values) for values in zip(*(p.sums for p in parts)))
        spf_fail, dkim_fail = messages - spf_pass, messages - dkim_pass
        rows.append((org_id, ip, _stored_time(first), _stored_time(last), messages, compliant,
                     spf_fail, dkim_fail, forwarded, spf_fail + dkim_fail, len(new), ip_key(ip),
                     percentage(compliant, messages) if messages else 0.0,
                     search_text(ip, new or domains), *_UNKNOWN.values()))
    _SOURCES.run(rows)


# What a new source is until enriched (no database defaults: peewee gives them in Python).
_UNKNOWN = {Source.fcrdns: "unknown", Source.abuse_status: "unknown",
            Source.classification: "unknown", Source.authorized: False}


def _sums(model):
    return [model.messages, model.compliant, model.spf_fail, model.dkim_fail, model.forwarded]


def _added(model, add) -> dict:
    """On a conflict: the `add` columns added to, and the first_seen/last_seen window widened."""
    changes = {f: f + EXCLUDED[f.column_name] for f in add}
    first, last = EXCLUDED[model.first_seen.column_name], EXCLUDED[model.last_seen.column_name]
    changes[model.first_seen] = Case(None, [(first < model.first_seen, first)], model.first_seen)
    changes[model.last_seen] = Case(None, [(last > model.last_seen, last)], model.last_seen)
    return changes


def _source_changes(add) -> dict:
    """_added, and the compliance rate and search text of the sums after the report."""
    changes = _added(Source, add)
    total = Source.messages + EXCLUDED.messages
    changes[Source.compliance_rate] = Case(None, [(
        total > 0, percentage(Source.compliant + EXCLUDED.compliant, total))], 0)
    # A domain new to a known source joins its search text ("ip domain" when inserted).
    added = fn.SUBSTR(EXCLUDED.search_text, fn.LENGTH(EXCLUDED.ip) + 1)
    fits = fn.LENGTH(Source.search_text) + fn.LENGTH(added) <= SEARCH_LENGTH
    changes[Source.search_text] = Case(None, [(
        (EXCLUDED.domain_count > 0) & fits, Source.search_text.concat(added))],
        Source.search_text)
    return changes


_DOMAIN_FIELDS = [SourceDomain.org, SourceDomain.domain, SourceDomain.ip, SourceDomain.first_seen,
                  SourceDomain.last_seen, *_sums(SourceDomain), SourceDomain.quarantined,
                  SourceDomain.rejected, SourceDomain.reports]
_DOMAINS = sql.CompiledRows(lambda rows: SourceDomain
                            .insert_many(rows, fields=_DOMAIN_FIELDS)
                            .on_conflict(conflict_target=[SourceDomain.org, SourceDomain.ip,
                                                          SourceDomain.domain],
                                         update=_added(SourceDomain, _DOMAIN_FIELDS[5:]))
                            .returning(SourceDomain.org, SourceDomain.domain, SourceDomain.ip,
                                       SourceDomain.reports))
_SOURCE_FIELDS = [Source.org, Source.ip, Source.first_seen, Source.last_seen, *_sums(Source),
                  Source.auth_failures, Source.domain_count, Source.ip_key, Source.compliance_rate,
                  Source.search_text, *_UNKNOWN]
_SOURCES = sql.CompiledRows(lambda rows: Source
                            .insert_many(rows, fields=_SOURCE_FIELDS)
                            .on_conflict(conflict_target=[Source.org, Source.ip],
                                         update=_source_changes(_SOURCE_FIELDS[4:11])))


def _stored_time(moment: datetime):
    return Source.first_seen.db_value(moment)


def _announce(org_id: str, domain: str, day: date, new_ips: list[str]) -> None:
    """new_sender for the busiest IPs that first sent for the domain in this report, once the
    domain's reports go back a week before it (before that every sender is new)."""
    history = _FIRST_DAY.run(org=org_id, domain=domain)
    started = history[0][0] if history and history[0][0] is not None else None
    if isinstance(started, str):
        started = date.fromisoformat(started[:10])
    if started is None or day - started < NEW_SENDER_HISTORY:
        return
    # mark=False: the same transaction marks the organization (ingest/shared_rows.py).
    events.raise_events(org_id, "new_sender", [
        {"dedupe_key": f"new_sender:{domain}:{ip}", "title": f"New sender {ip} for {domain}",
         "detail": f"{ip} sent mail as {domain} for the first time in a report covering "
                   f"{day.isoformat()}.", "domain": domain, "link": f"/sources/{ip}"}
        for ip in new_ips[:NEW_SENDER_EVENTS]], mark=False)


_FIRST_DAY = sql.Compiled(lambda org, domain: DomainDay
                          .select(DomainDay.day).where(DomainDay.org == org,
                                                       DomainDay.domain == domain)
                          .order_by(DomainDay.day).limit(1))
