"""Enrich many sending IPs at once through one resolver: identity, service, geo, reputation.

One run: the DNSBL zones are self-tested once, then every IP is looked up concurrently (at most
`bound` at a time) through one Lookup, so a name asked twice costs one packet. Results are plain
values that a job stores; nothing here touches the database."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterable

from dnscheck.resolver import Lookup, gather
from sources import dnsbl, geo, identity, reputation, services
from sources.identity import UNKNOWN, Identity, InvalidIP

DEFAULT_BOUND = 32


@dataclass(frozen=True)
class Signals:
    """What a source's records say beside its PTR: DKIM d= of signatures that passed from it,
    SPF domains that passed from it, the reporting domains' SPF includes that authorize it."""
    dkim_domains: tuple[str, ...] = ()
    spf_domains: tuple[str, ...] = ()
    spf_includes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Enrichment:
    ip: str
    identity: Identity
    service: services.ServiceMatch | None
    geo: geo.Geo
    outcomes: tuple[dnsbl.ZoneAnswer, ...]
    reputation: reputation.Reputation
    error: str = ""

    @property
    def learned_nothing(self) -> bool:
        """DNS told nothing of the IP: its PTR and every blocklist answer unknown (or none)."""
        return self.identity.fcrdns == UNKNOWN and all(
            outcome.state in (dnsbl.UNKNOWN, dnsbl.ERROR) for outcome in self.outcomes)

    def fields(self) -> dict:
        """The source row's enrichment fields (the contract's source row), None when unknown."""
        service = self.service.service if self.service else None
        return {
            "ptr": self.identity.ptr,
            "service_name": service.name if service else None,
            "service_slug": service.slug if service else None,
            "service_icon": service.icon if service else None,
            "service_kind": service.kind if service else None,
            "abuse_status": self.reputation.abuse_status,
            "country": self.geo.country,
            "geo": {"country": self.geo.country, "country_name": self.geo.country_name,
                    "asn": self.geo.asn, "as_org": self.geo.as_org},
            "blocklist": self.reputation.blocklist,
        }


@dataclass
class EnrichmentRun:
    """A run's results by the IP text given, and the zones' self-test (dropped ones say why)."""
    results: dict[str, Enrichment]
    zones: list[dnsbl.ZoneTest]
    checked_at: datetime
    problems: list[str] = field(default_factory=list)

    @property
    def dropped(self) -> list[dnsbl.ZoneTest]:
        return [zone for zone in self.zones if not zone.usable]


def enrich(config, ips: Iterable[str], signals: dict[str, Signals] | None = None,
           now: datetime | None = None, bound: int = DEFAULT_BOUND,
           lookup: Lookup | None = None, each: Callable[[], None] | None = None) -> EnrichmentRun:
    """Enrich each IP (each() called as each is done); a bad RUA_GEOIP_DB raises GeoError
    before any look-up."""
    located = geo.database(config.geoip_db)
    lookup = lookup or Lookup(config)
    now = now or datetime.now(timezone.utc)
    tests = dnsbl.self_test(lookup, dnsbl.zones(config.dnsbl_zones))
    signals = signals or {}
    wanted = list(dict.fromkeys(str(ip) for ip in ips))
    calls = {ip: _one(lookup, located, tests, ip, signals.get(ip) or Signals(), now, each)
             for ip in wanted}
    run = EnrichmentRun(gather(calls, bound), tests, now)
    run.problems = [f"DNSBL {zone.zone} left out of this run: {zone.problem}"
                    for zone in run.dropped]
    return run


def enrich_one(lookup: Lookup, located, tests: list[dnsbl.ZoneTest], ip: str,
               signals: Signals = Signals(), now: datetime | None = None) -> Enrichment:
    """One IP through a run's resolver, geo database and self-tested zones."""
    now = now or datetime.now(timezone.utc)
    try:
        identity.parse_ip(ip)
    except InvalidIP as bad:
        return Enrichment(ip, Identity(ip, UNKNOWN, why=str(bad)), None, geo.UNKNOWN_GEO, (),
                          reputation.reputation([], now), error=str(bad))
    found = identity.look_up(lookup, ip)
    match = services.identify(found.ptr, signals.dkim_domains, signals.spf_domains,
                              signals.spf_includes)
    outcomes = dnsbl.check(lookup, ip, tests)
    return Enrichment(ip, found, match, located.locate(ip), tuple(outcomes),
                      reputation.reputation(outcomes, now))


def _one(lookup, located, tests, ip, signals, now, each):
    def call():
        found = enrich_one(lookup, located, tests, ip, signals, now)
        if each is not None:
            each()
        return found
    return call
