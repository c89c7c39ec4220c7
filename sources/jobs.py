"""Enrichment kept: which sources are due, one enrichment run per organization, the results
written to their Source rows with the source's verdict, records re-classified when what is
known of their sender changed, and the sources' events raised or cleared.

Events: blocklisted_source is one per IP, open while it is listed. unauthorized_sender is one
per domain, open while any source sending as the domain is classified unauthorized: its detail
counts them and names the busiest (one per IP flooded the events of a busy domain), and it
clears once none remains.

Due: never enriched first (new IPs, within minutes of their report), then those enriched more
than a day ago, oldest first. Offline (RUA_OFFLINE=1) nothing is looked up or written: every
enrichment field stays unknown/null rather than half-known.
"""
from __future__ import annotations

import ipaddress
import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable

from dnscheck.resolver import Lookup
from rules import verdicts
from rules.windows import window_days
from sources import retry, services
from sources.enrich import Enrichment, Signals, enrich
from store import db, events, rollups
from store.addresses import canonical_ip, search_text, spellings
from store.clock import utcnow
from store.job_runs import JobFailed
from store.models import Domain, Event, Record, Report, Source, SourceDomain

log = logging.getLogger("rua.sources")
STALE = timedelta(days=1)
BATCH = 500
SOURCES_PER_RUN = 5000      # new sources first, then the day-old ones: a run of a few minutes
UNAUTHORIZED = "unauthorized_sender:"
NAMED_IPS = 3           # the busiest unauthorized sources an event's detail names


@dataclass
class Enriched:
    """One refresh: sources written, records whose classification changed, zones dropped;
    sources DNS told nothing of (left as they were, retried later) and why, when it is the
    resolver; organizations backing off since their last run learned nothing."""
    sources: int = 0
    reclassified: int = 0
    problems: list[str] = field(default_factory=list)
    skipped: str = ""
    unlearned: int = 0
    unanswered: str = ""
    waiting: dict[str, datetime] = field(default_factory=dict)


def due(now: datetime, org_id: str | None = None, ips: list[str] | None = None,
        limit: int | None = None) -> list[tuple[str, str]]:
    """(org id, ip) of the sources to enrich: the named IPs, or the new then the stale ones."""
    query = Source.select(Source.org, Source.ip)
    if org_id is not None:
        query = query.where(Source.org == org_id)
    if ips:
        query = query.where(Source.ip.in_(sorted({canonical_ip(ip) for ip in ips})))
        return list(query.order_by(Source.org, Source.ip_key).tuples())
    new = query.where(Source.enriched_at.is_null()).order_by(Source.messages.desc(), Source.id)
    stale = (query.where(Source.enriched_at < now - STALE)
             .order_by(Source.enriched_at, Source.id))
    found = list(new.limit(limit).tuples())
    if limit is None or len(found) < limit:
        found += list(stale.limit(None if limit is None else limit - len(found)).tuples())
    return found


def refresh(config, now: datetime | None = None, org_id: str | None = None,
            ips: list[str] | None = None, limit: int | None = None,
            progress: Callable[[int, int], None] | None = None) -> Enriched:
    """Enrich the due sources (or the named IPs) and store what was learned; progress(done,
    total) is called as each source's look-ups end."""
    now = now or utcnow()
    if config.offline:
        return Enriched(skipped="RUA_OFFLINE is set: nothing looked up")
    targets = due(now, org_id, ips, limit)
    by_org: dict[str, list[str]] = {}
    for org, ip in targets:
        by_org.setdefault(org, []).append(ip)
    done = Enriched()
    lookup = Lookup(config)           # one resolver for the whole refresh: a name asked once
    unusable = None
    each = _counter(len(targets), progress)
    for org, org_ips in by_org.items():
        after = retry.waiting_until(org)
        if not ips and after is not None and after > now:
            done.waiting[org] = after
            continue
        if unusable is None:    # asked once, before thousands of look-ups that cannot tell
            unusable = lookup.unusable()
        if unusable:
            done.unlearned += len(org_ips)
            done.waiting[org] = retry.learned_nothing(org, now)
            continue
        learned = 0
        for start in range(0, len(org_ips), BATCH * 10):
            chunk = org_ips[start:start + BATCH * 10]
            run = enrich(config, chunk, signals(org, chunk), now=now, lookup=lookup, each=each)
            for problem in run.problems:
                if problem not in done.problems:
                    done.problems.append(problem)
            # What DNS told nothing of keeps what was known and stays due: not done.
            found = [run.results[ip] for ip in chunk if not run.results[ip].learned_nothing]
            with db.atomic():
                done.reclassified += save(org, found, now)
            done.sources += len(found)
            done.unlearned += len(chunk) - len(found)
            learned += len(found)
            events.mark_dirty(org, now)
        if learned:
            retry.learned_something(org)
        else:
            done.waiting[org] = retry.learned_nothing(org, now)
    done.unanswered = lookup.dead
    return done


def scheduled(now: datetime, config) -> Enriched | None:
    """Every few minutes: enrich new sources and re-check day-old ones. Offline it does
    nothing (None): everything stays unknown."""
    if config.offline:
        log.info("source enrichment skipped: RUA_OFFLINE is set")
        return None
    result = refresh(config, now, limit=SOURCES_PER_RUN)
    for problem in result.problems:
        log.warning("%s", problem)
    log.info("enriched %d source(s), %d record(s) reclassified", result.sources,
             result.reclassified)
    if result.unanswered:
        raise JobFailed(f"source enrichment: {result.unanswered}: {result.unlearned} "
                        f"source(s) not enriched, tried again later")
    if result.unlearned:
        log.warning("%d source(s) not enriched: DNS could not tell; tried again later",
                    result.unlearned)
    return result


def _counter(total: int, progress: Callable[[int, int], None] | None):
    """A thread-safe call per source done that reports (done, total) to progress."""
    if progress is None:
        return None
    lock, count = threading.Lock(), [0]

    def each():
        with lock:
            count[0] += 1
            progress(count[0], total)
    return each


def signals(org_id: str, ips: list[str]) -> dict[str, Signals]:
    """What each IP's records say of its sender: DKIM d= of passing signatures, passing MAIL
    FROM domains, and the SPF includes of a domain of the organization that passed aligned
    from it (its DNS check's facts) when they can only name one service (confirmed_includes)."""
    found: dict[str, tuple[set, set, set]] = {}
    spf_facts = {name: (dns or {}).get("spf") for name, dns in Domain.select(
        Domain.name, Domain.dns).where(Domain.org == org_id).tuples()}
    for start in range(0, len(ips), BATCH):
        chunk = ips[start:start + BATCH]
        rows = (Record.select(Record.source_ip, Record.auth_dkim, Record.auth_spf,
                              Record.alignment).distinct()
                .where(Record.org == org_id, Record.source_ip.in_(chunk)).tuples())
        for ip, dkim, spf, alignment in rows:
            dkim_domains, spf_domains, includes = found.setdefault(canonical_ip(ip),
                                                                   (set(), set(), set()))
            dkim_domains.update(_passed(dkim))
            spf_domains.update(_passed(spf, mfrom=True))
            for domain in _aligned_spf_passes(spf, (alignment or {}).get("spf")):
                includes.update(confirmed_includes(spf_facts.get(domain)))
    return {ip: Signals(tuple(sorted(d)), tuple(sorted(s)), tuple(sorted(i)))
            for ip, (d, s, i) in found.items()}


def _aligned_spf_passes(results, flags) -> set[str]:
    """Domains of MAIL FROM passes aligned with the From domain: their SPF authorized the IP."""
    flags = list(flags or ())
    return {name for i, entry in enumerate(results or ()) if i < len(flags) and flags[i]
            for name in _passed([entry], mfrom=True)}


def _passed(results, mfrom: bool = False) -> set[str]:
    names = set()
    for entry in results or ():
        if not isinstance(entry, dict) or str(entry.get("Result", "")).lower() != "pass":
            continue
        if mfrom and str(entry.get("Scope") or "mfrom").lower() != "mfrom":
            continue
        if entry.get("Domain"):
            names.add(str(entry["Domain"]).strip().lower().rstrip("."))
    return names


OWN_MECHANISMS = ("ip4", "ip6", "a", "mx", "ptr", "exists")


def confirmed_includes(spf: dict | None) -> tuple[str, ...]:
    """A domain's SPF includes (its DNS check's `spf` facts) that must hold an IP its SPF
    passed: all of them, when the record authorizes nothing itself (no ip4, ip6, a, mx, ptr or
    exists) and every include, nested ones too, is one service's; else none: the IP could be
    another's."""
    if not spf or not spf.get("record") or not spf.get("includes"):
        return ()
    for term in str(spf["record"]).lower().split()[1:]:
        if term.lstrip("+-~?").split(":")[0].split("/")[0] in OWN_MECHANISMS:
            return ()
    includes = tuple(spf["includes"])
    named = {found[0].slug if found else None for found in map(services.lookup, includes)}
    return includes if len(named) == 1 and None not in named else ()


def save(org_id: str, results: list[Enrichment], now: datetime) -> int:
    """Write enrichments and their verdicts to the Source rows; records re-classified."""
    changed, touched = 0, set()
    for start in range(0, len(results), BATCH):
        chunk = results[start:start + BATCH]
        ips = [canonical_ip(found.ip) for found in chunk]
        rows = {row.ip: row for row in Source.select().where(Source.org == org_id,
                                                             Source.ip.in_(ips))}
        domains: dict[str, list[SourceDomain]] = {}
        for d in (SourceDomain.select()
                  .where(SourceDomain.org == org_id, SourceDomain.ip.in_(ips))):
            domains.setdefault(d.ip, []).append(d)
        open_keys = events.open_keys(org_id, "blocklisted_source:")
        for ip, found in zip(ips, chunk):
            if ip in rows:
                mine = sorted(domains.get(ip, []), key=lambda d: (-d.messages, d.domain))
                changed += _store_one(org_id, rows[ip], found, mine, open_keys, now)
                touched.update(d.domain for d in mine)
    unauthorized_events(org_id, touched, now)
    return changed


def _store_one(org_id, row: Source, found: Enrichment, domains, open_keys, now) -> int:
    fields = found.fields()
    geo = fields["geo"]
    sender = verdicts.sender(fields["service_kind"], fields["abuse_status"],
                             fields["service_name"], found.identity.fcrdns,
                             found.identity.base_domain)
    verdict = verdicts.classify_source([results_of(d) for d in domains], sender)
    values = dict(ptr=fields["ptr"], fcrdns=found.identity.fcrdns,
                  base_domain=found.identity.base_domain, service_name=fields["service_name"],
                  service_slug=fields["service_slug"], service_icon=fields["service_icon"],
                  service_kind=fields["service_kind"], abuse_status=fields["abuse_status"],
                  blocklist=fields["blocklist"], country=geo["country"],
                  country_name=geo["country_name"], asn=geo["asn"], as_org=geo["as_org"],
                  classification=verdict.classification, authorized=verdict.authorized,
                  verdict={"because": list(verdict.because), "sentence": verdict.sentence},
                  search_text=search_text(row.ip, [d.domain for d in domains], fields["ptr"],
                                          fields["service_name"]),
                  enriched_at=now)
    Source.update(**values).where(Source.id == row.id).execute()
    _listed_event(org_id, row.ip, domains[0].domain if domains else "", fields, open_keys)
    before = verdicts.sender(row.service_kind, row.abuse_status)
    after = verdicts.sender(fields["service_kind"], fields["abuse_status"])
    if _decides(after) == _decides(before):
        return 0
    return reclassify(org_id, row, after)


def _decides(sender) -> tuple:
    """What of a sender record classification reads: its kind, and a bad reputation or not."""
    return sender.kind, sender.reputation in verdicts.BAD_REPUTATIONS


def results_of(d: SourceDomain) -> verdicts.DomainResults:
    return verdicts.DomainResults(d.domain, d.messages,
                                  dkim_aligned_pass=d.messages - d.dkim_fail,
                                  spf_aligned_pass=d.messages - d.spf_fail,
                                  dmarc_pass=d.compliant, forwarded=d.forwarded)


def _listed_event(org_id: str, ip: str, domain: str, fields: dict, open_keys: set) -> None:
    """blocklisted_source, open while the IP is listed (only a change touches the events)."""
    link = f"/sources/{ip}"
    listed = f"blocklisted_source:{ip}"
    blocklist = fields["blocklist"]
    if blocklist["status"] == "listed" and listed not in open_keys:
        zones = ", ".join(blocklist["listed_on"])
        events.raise_event(org_id, "blocklisted_source", listed,
                           title=f"{ip} is on a DNS blocklist",
                           detail=f"{ip}, which sends mail as {domain or 'your domains'}, is "
                                  f"listed on {zones}.", domain=domain, link=link)
    elif blocklist["status"] == "clean" and listed in open_keys:
        events.clear(org_id, [listed])


def unauthorized_events(org_id: str, domains: set[str], now: datetime) -> None:
    """unauthorized_sender per domain: opened, its detail kept current, or cleared, as its
    sources' classifications now stand; any keyed by an IP instead is cleared (one per domain)."""
    found: dict[str, list[tuple[str, int]]] = {}
    names = sorted(domains)
    for start in range(0, len(names), BATCH):
        rows = (SourceDomain.select(SourceDomain.domain, SourceDomain.ip, SourceDomain.messages)
                .join(Source, on=(Source.org == SourceDomain.org) & (Source.ip == SourceDomain.ip))
                .where(SourceDomain.org == org_id,
                       SourceDomain.domain.in_(names[start:start + BATCH]),
                       Source.classification == verdicts.UNAUTHORIZED)
                .order_by(SourceDomain.messages.desc(), Source.ip_key).tuples())
        for domain, ip, messages in rows:
            found.setdefault(domain, []).append((ip, messages))
    opened = dict(Event.select(Event.dedupe_key, Event.detail)
                  .where(Event.org == org_id, Event.type == "unauthorized_sender",
                         Event.cleared_at.is_null()).tuples())
    gone = [key for key in opened if _per_ip(key)]
    for domain in names:
        key, senders = UNAUTHORIZED + domain, found.get(domain)
        if not senders:
            if key in opened:
                gone.append(key)
            continue
        detail = unauthorized_detail(domain, senders)
        if key not in opened:
            events.raise_event(org_id, "unauthorized_sender", key,
                               title=f"Unauthorized senders of {domain}", detail=detail,
                               domain=domain, link=f"/sources?domain={domain}", now=now)
        elif opened[key] != detail:
            (Event.update(detail=detail)
             .where(Event.org == org_id, Event.dedupe_key == key, Event.cleared_at.is_null())
             .execute())
    events.clear(org_id, gone, now)


def unauthorized_detail(domain: str, senders: list[tuple[str, int]]) -> str:
    """How many sources of the domain are unauthorized, naming the busiest ((ip, messages),
    busiest first)."""
    named = ", ".join(f"{ip} ({messages} message{'s' * (messages != 1)})"
                      for ip, messages in senders[:NAMED_IPS])
    count, verb = f"{len(senders)} sources", "are"
    if len(senders) == 1:
        count, verb = "1 source", "is"
    more = len(senders) - NAMED_IPS
    if more > 0:
        named += f" and {more} more"
    return f"{count} sending as {domain} {verb} not authorized: {named}."


def _per_ip(key: str) -> bool:
    """An unauthorized_sender key that names an IP, not a domain: the type is one per domain."""
    try:
        ipaddress.ip_address(key[len(UNAUTHORIZED):])
    except ValueError:
        return False
    return True


def reclassify(org_id: str, source: Source, sender) -> int:
    """Classify the IP's failing records again with what is now known of it; the rollups'
    forwarded counts follow. How many records changed."""
    rows = (Record.select(Record.id, Record.count, Record.dkim, Record.spf, Record.reasons,
                          Record.auth_dkim, Record.auth_spf, Record.alignment,
                          Record.classification, Record.source_ip, Report.domain,
                          Report.date_begin, Report.date_end)
            .join(Report, on=(Record.report == Report.id))
            .where(Record.org == org_id, Record.source_ip.in_(spellings(source)),
                   Record.dkim != "pass", Record.spf != "pass"))
    ip, changed, forwarded = source.ip, 0, {}
    for record in rows.objects():
        verdict = verdicts.classify_record(record, record.alignment, sender)
        if verdict == record.classification:
            continue
        Record.update(classification=verdict).where(Record.id == record.id).execute()
        changed += 1
        delta = record.count * ((verdict == verdicts.LIKELY_FORWARDED)
                                - (record.classification == verdicts.LIKELY_FORWARDED))
        if delta:
            day = window_days(record.date_begin, record.date_end)[2]
            key = (record.domain, day)
            forwarded[key] = forwarded.get(key, 0) + delta
    rollups.add_forwarded(org_id, ip, forwarded)
    return changed
