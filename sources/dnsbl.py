"""DNS blocklists (RFC 5782): query names, what an answer means, and each zone's self-test."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from dnscheck.resolver import Answer, Lookup, gather
from sources.identity import parse_ip

IPV4, IPV6 = "ipv4", "ipv6"
LISTED, NOT_LISTED, ERROR, UNKNOWN = "listed", "not_listed", "error", "unknown"
# RFC 5782 section 5: every list holds its test entry 127.0.0.2 (IPv6 ::ffff:7f00:2) and never
# 127.0.0.1 (::ffff:7f00:1).
TEST_LISTED = {IPV4: "127.0.0.2", IPV6: "::ffff:7f00:2"}
TEST_NOT_LISTED = {IPV4: "127.0.0.1", IPV6: "::ffff:7f00:1"}
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
# Spamhaus answers 127.255.255.252/254/255 for a refused or malformed query, not a listing.
ERROR_CODES = ipaddress.ip_network("127.255.255.0/24")


@dataclass(frozen=True)
class ZoneAnswer:
    """One zone's answer for one address: listed (codes), not_listed, error or unknown."""
    zone: str
    state: str
    codes: tuple[str, ...] = ()
    why: str = ""


@dataclass(frozen=True)
class ZoneTest:
    """A zone's self-test for this run: the families it may be asked about, or why none."""
    zone: str
    families: frozenset = frozenset()
    problem: str = ""

    @property
    def usable(self) -> bool:
        return bool(self.families)


def zones(setting: str) -> list[str]:
    """The zones named by RUA_DNSBL_ZONES, lower-case, each once, in order."""
    seen: list[str] = []
    for zone in (setting or "").split(","):
        zone = zone.strip().strip(".").lower()
        if zone and zone not in seen:
            seen.append(zone)
    return seen


def family(ip: str) -> str:
    return IPV4 if parse_ip(ip).version == 4 else IPV6


def query_name(ip: str, zone: str) -> str:
    """RFC 5782 2.1 and 2.4: IPv4 octets or IPv6 nibbles in reverse order, then the zone."""
    return _query_name(parse_ip(ip), zone)


def _query_name(address, zone: str) -> str:
    if address.version == 4:
        labels = str(address).split(".")
    else:
        labels = list(address.exploded.replace(":", ""))
    return ".".join(reversed(labels)) + "." + zone


def outcome(zone: str, answer: Answer) -> ZoneAnswer:
    """What one A answer means (RFC 5782 2.3): any 127/8 address is a listing, except the
    error codes 127.255.255.0/24; an address outside 127/8 (a resolver rewriting NXDOMAIN)
    is an error; NXDOMAIN or no A record is not listed."""
    if answer.unknown:
        return ZoneAnswer(zone, UNKNOWN, why=answer.why)
    if not answer.found:
        return ZoneAnswer(zone, NOT_LISTED)
    codes = tuple(sorted(answer.records))
    for code in codes:
        try:
            address = ipaddress.ip_address(code)
        except ValueError:
            return ZoneAnswer(zone, ERROR, codes, f"answered {code}, not an address")
        if address.version != 4 or address not in LOOPBACK:
            return ZoneAnswer(zone, ERROR, codes, f"answered {code}, outside 127.0.0.0/8")
        if address in ERROR_CODES:
            return ZoneAnswer(zone, ERROR, codes, f"answered {code}, an error code")
    return ZoneAnswer(zone, LISTED, codes)


def judge(zone: str, listed: dict[str, ZoneAnswer], not_listed: dict[str, ZoneAnswer]) -> ZoneTest:
    """The self-test verdict from the answers for the test entries, by family (pure).

    A zone that lists 127.0.0.1 lists everything and one that answers an error code refuses
    us: either is dropped whole. A zone without the IPv6 test entry serves IPv4 only."""
    families = set()
    for fam in (IPV4, IPV6):
        must, never = listed[fam], not_listed[fam]
        if never.state == LISTED:
            return ZoneTest(zone, problem=f"lists {TEST_NOT_LISTED[fam]}, which no list may "
                                          "hold: it answers every query as listed")
        for seen in (must, never):
            if seen.state == ERROR:
                return ZoneTest(zone, problem=f"{seen.why}: it refuses this resolver's "
                                              "queries or is misconfigured")
        if fam == IPV4 and UNKNOWN in (must.state, never.state):
            why = must.why if must.state == UNKNOWN else never.why
            return ZoneTest(zone, problem=f"could not be checked ({why})")
        if must.state == LISTED and never.state == NOT_LISTED:
            families.add(fam)
        elif fam == IPV4:
            return ZoneTest(zone, problem=f"does not list its test entry {TEST_LISTED[fam]}")
    return ZoneTest(zone, frozenset(families))


def self_test(lookup: Lookup, names: list[str], bound: int = 8) -> list[ZoneTest]:
    """Each zone's self-test through the run's resolver, in the order given."""
    calls = {}
    for zone in names:
        for fam in (IPV4, IPV6):
            for kind, ip in (("listed", TEST_LISTED[fam]), ("not_listed", TEST_NOT_LISTED[fam])):
                name = _query_name(ipaddress.ip_address(ip), zone)   # ::ffff:7f00:2 as IPv6
                calls[(zone, fam, kind)] = _asker(lookup, name)
    answers = gather(calls, bound)
    return [judge(zone,
                  {f: outcome(zone, answers[(zone, f, "listed")]) for f in (IPV4, IPV6)},
                  {f: outcome(zone, answers[(zone, f, "not_listed")]) for f in (IPV4, IPV6)})
            for zone in names]


def check(lookup: Lookup, ip: str, tests: list[ZoneTest]) -> list[ZoneAnswer]:
    """The address against every zone whose self-test passed for its family."""
    fam = family(ip)
    return [outcome(t.zone, lookup.query(query_name(ip, t.zone), "A"))
            for t in tests if fam in t.families]


def _asker(lookup: Lookup, name: str):
    return lambda: lookup.query(name, "A")
