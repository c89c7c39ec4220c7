"""Source facts: each sending IP's totals per organization (Source) and per policy domain
(SourceDomain), added to in the stored report's transaction beside the daily rollups.

Only a stored report reaches here (a duplicate never does), so the sums are exact. The report's
sums are folded per IP in memory (rollups.ReportTally) and written by two multi-row upserts per 500
IPs, which add to existing rows; SourceDomain's RETURNING says which (domain, IP) pairs this
report made (their `reports` is 1), which is what Source's domain count and the new_sender
events (raised in one insert per report) need.
"""
from __future__ import annotations

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


def save(org_id: str, domain: str, first: datetime, last: datetime, day: date, tally,
         received_at: datetime) -> None:
    """Add one stored report's per-IP sums (a rollups.ReportTally) to the source facts."""
    rows = [(ip, *sums, *tally.dispositions.get(ip, (0, 0)))
            for ip, sums in tally.in_address_order()]
    new = []
    for start in range(0, len(rows), sql.BATCH):
        chunk = rows[start:start + sql.BATCH]
        new += _save_domains(org_id, domain, first, last, chunk)
        made = set(new)
        _save_sources(org_id, domain, first, last, chunk, made)
    others: dict[str, set[str]] = {}
    for text, ip in tally.spelled.items():
        if text != ip:
            others.setdefault(ip, set()).add(text)
    remember_spellings(org_id, others)
    # An archive of old reports imported today makes no news: new_sender is about the last days.
    if new and received_at - last <= NEW_SENDER_RECENT:
        _announce(org_id, domain, day, sorted(new, key=lambda ip: -tally.by_ip[ip][0]))


def _save_domains(org_id, domain, first, last, chunk) -> list[str]:
    """Upsert the chunk's SourceDomain rows; the IPs whose row this report created."""
    begin, end = _stored_time(first), _stored_time(last)
    rows = [(org_id, domain, ip, begin, end, messages, compliant, messages - spf_pass,
             messages - dkim_pass, forwarded, quarantined, rejected, 1)
            for ip, messages, compliant, spf_pass, dkim_pass, forwarded, quarantined, rejected
            in chunk]
    return [ip for ip, reports in _DOMAINS.run(rows) if reports == 1]


def _save_sources(org_id, domain, first, last, chunk, new: set) -> None:
    begin, end = _stored_time(first), _stored_time(last)
    rows = []
    for ip, messages, compliant, spf_pass, dkim_pass, forwarded, *_ in chunk:
        spf_fail, dkim_fail = messages - spf_pass, messages - dkim_pass
        rows.append((org_id, ip, begin, end, messages, compliant, spf_fail, dkim_fail, forwarded,
                     spf_fail + dkim_fail, 1 if ip in new else 0, ip_key(ip),
                     percentage(compliant, messages) if messages else 0.0,
                     search_text(ip, [domain]), *_UNKNOWN.values()))
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
                            .returning(SourceDomain.ip, SourceDomain.reports))
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
    # mark=False: the report's own transaction marks the organization (storing._store).
    events.raise_events(org_id, "new_sender", [
        {"dedupe_key": f"new_sender:{domain}:{ip}", "title": f"New sender {ip} for {domain}",
         "detail": f"{ip} sent mail as {domain} for the first time in a report covering "
                   f"{day.isoformat()}.", "domain": domain, "link": f"/sources/{ip}"}
        for ip in new_ips[:NEW_SENDER_EVENTS]], mark=False)


_FIRST_DAY = sql.Compiled(lambda org, domain: DomainDay
                          .select(DomainDay.day).where(DomainDay.org == org,
                                                       DomainDay.domain == domain)
                          .order_by(DomainDay.day).limit(1))
