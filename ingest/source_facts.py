"""Source facts: each sending IP's totals per organization (Source) and per policy domain
(SourceDomain), added to in the stored report's transaction beside the daily rollups.

Only a stored report reaches here (a duplicate never does), so the sums are exact. The upserts
add to existing rows; SourceDomain's RETURNING says which (domain, IP) pairs this report made
(their `reports` is 1), which is what Source's domain count and the new_sender event need.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta

from store import compiled as sql
from store import db, events
from store.addresses import SEARCH_LENGTH, ip_key, remember_spellings, search_text
from store.models import DomainDay, Source, SourceDomain

NEW_SENDER_HISTORY = timedelta(days=7)   # a domain needs this much history before a sender is new
NEW_SENDER_EVENTS = 10                   # per report at most (its busiest new senders)


def save(org_id: str, domain: str, first: datetime, last: datetime, day: date, tally) -> None:
    """Add one stored report's per-IP sums (a rollups.Tally) to the source facts."""
    rows = [(ip, *sums, *tally.dispositions.get(ip, (0, 0))) for ip, sums in tally.by_ip.items()]
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
    if new:
        _announce(org_id, domain, day, sorted(new, key=lambda ip: -tally.by_ip[ip][0]))


def _save_domains(org_id, domain, first, last, chunk) -> list[str]:
    """Upsert the chunk's SourceDomain rows; the IPs whose row this report created."""
    fields = [SourceDomain.org, SourceDomain.domain, SourceDomain.ip, SourceDomain.first_seen,
              SourceDomain.last_seen, *_sums(SourceDomain), SourceDomain.quarantined,
              SourceDomain.rejected, SourceDomain.reports]
    key = ("source_domain", len(chunk))
    text = sql.statement(key, lambda: _upsert(SourceDomain, fields, len(chunk),
                                              [SourceDomain.org, SourceDomain.ip,
                                               SourceDomain.domain], fields[5:])
                         + f" RETURNING {sql.name(SourceDomain.ip)}, "
                           f"{sql.name(SourceDomain.reports)}")
    begin, end = _stamp(first), _stamp(last)
    params = []
    for ip, messages, compliant, spf_pass, dkim_pass, forwarded, quarantined, rejected in chunk:
        params += [org_id, domain, ip, begin, end, messages, compliant, messages - spf_pass,
                   messages - dkim_pass, forwarded, quarantined, rejected, 1]
    return [ip for ip, reports in db.execute_sql(text, params).fetchall() if reports == 1]


def _save_sources(org_id, domain, first, last, chunk, new: set) -> None:
    fields = [Source.org, Source.ip, Source.first_seen, Source.last_seen, *_sums(Source),
              Source.auth_failures, Source.domain_count, Source.ip_key, Source.compliance_rate,
              Source.search_text, *_UNKNOWN]
    t, n = sql.table(Source), sql.name

    def build():
        text = _upsert(Source, fields, len(chunk), [Source.org, Source.ip], fields[4:11])
        total = f"({t}.{n(Source.messages)} + excluded.{n(Source.messages)})"
        # A domain new to a known source joins its search text ("ip domain" when inserted).
        found, added = f"{t}.{n(Source.search_text)}", (
            f"SUBSTR(excluded.{n(Source.search_text)}, LENGTH(excluded.{n(Source.ip)}) + 1)")
        return (text + f", {n(Source.compliance_rate)} = CASE WHEN {total} > 0 THEN 100.0 * "
                f"({t}.{n(Source.compliant)} + excluded.{n(Source.compliant)}) / {total} "
                f"ELSE 0 END, {n(Source.search_text)} = CASE WHEN "
                f"excluded.{n(Source.domain_count)} > 0 AND LENGTH({found}) + LENGTH({added}) "
                f"<= {SEARCH_LENGTH} THEN {found} || {added} ELSE {found} END")
    text = sql.statement(("source", len(chunk)), build)
    begin, end = _stamp(first), _stamp(last)
    params = []
    for ip, messages, compliant, spf_pass, dkim_pass, forwarded, *_ in chunk:
        spf_fail, dkim_fail = messages - spf_pass, messages - dkim_pass
        params += [org_id, ip, begin, end, messages, compliant, spf_fail, dkim_fail, forwarded,
                   spf_fail + dkim_fail, 1 if ip in new else 0, ip_key(ip),
                   100.0 * compliant / messages if messages else 0.0,
                   search_text(ip, [domain]), *_UNKNOWN.values()]
    db.execute_sql(text, params)


# What a new source is until enriched (no database defaults: peewee gives them in Python).
_UNKNOWN = {Source.fcrdns: "unknown", Source.abuse_status: "unknown",
            Source.classification: "unknown", Source.authorized: False}


def _sums(model):
    return [model.messages, model.compliant, model.spf_fail, model.dkim_fail, model.forwarded]


def _upsert(model, fields, rows: int, conflict, add) -> str:
    """INSERT of `rows` rows; on the conflict key, `add` columns are added and the window of
    first_seen/last_seen widened."""
    t, n = sql.table(model), sql.name
    first, last = n(model.first_seen), n(model.last_seen)
    sets = [f"{n(f)} = {t}.{n(f)} + excluded.{n(f)}" for f in add]
    sets += [f"{first} = CASE WHEN excluded.{first} < {t}.{first} THEN excluded.{first} "
             f"ELSE {t}.{first} END",
             f"{last} = CASE WHEN excluded.{last} > {t}.{last} THEN excluded.{last} "
             f"ELSE {t}.{last} END"]
    one = "(" + ", ".join(["?"] * len(fields)) + ")"
    return (f"INSERT INTO {t} ({', '.join(n(f) for f in fields)}) VALUES "
            f"{', '.join([one] * rows)} ON CONFLICT ({', '.join(n(f) for f in conflict)}) "
            f"DO UPDATE SET {', '.join(sets)}")


def _stamp(moment: datetime):
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
