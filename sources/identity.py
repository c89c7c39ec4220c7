"""Who an IP says it is: its PTR names, forward-confirmed (FCrDNS), and their base domain."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from dnscheck.resolver import Answer, Lookup
from store.addresses import unmapped
from store.domain_names import InvalidDomain, normalize, organizational_domain

PASS, FAIL, NONE, UNKNOWN = "pass", "fail", "none", "unknown"
# A reverse zone may serve many names; a few are enough to find the one that confirms.
MAX_PTR_NAMES = 5


class InvalidIP(ValueError):
    """The text is not an IPv4 or IPv6 address."""


@dataclass(frozen=True)
class Identity:
    """fcrdns: pass (a PTR name resolves back to the IP), fail (none does), none (no PTR),
    unknown (DNS could not tell). ptr and base_domain are set only on pass: an unconfirmed
    name is anyone's to write and is never trusted; `names` keeps what the reverse zone said."""
    ip: str
    fcrdns: str
    ptr: str | None = None
    base_domain: str | None = None
    names: tuple[str, ...] = ()
    why: str = ""


def parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address in text (any IPv6 spelling; an IPv4-mapped IPv6 address is its IPv4)."""
    try:
        address = ipaddress.ip_address(str(text).strip())
    except ValueError:
        raise InvalidIP(f"{str(text)[:64]!r} is not an IP address") from None
    return unmapped(address)


def reverse_name(ip: str) -> str:
    """The PTR query name: in-addr.arpa for IPv4, nibbles under ip6.arpa for IPv6."""
    return parse_ip(ip).reverse_pointer


def forward_type(ip: str) -> str:
    return "A" if parse_ip(ip).version == 4 else "AAAA"


def ptr_names(answer: Answer) -> tuple[str, ...]:
    """The valid host names of a PTR answer, lower-case, without the root dot, sorted."""
    names = set()
    for record in answer.records if answer.found else ():
        try:
            names.add(normalize(record))
        except InvalidDomain:
            continue
    return tuple(sorted(names))[:MAX_PTR_NAMES]


def confirm(ip: str, ptr: Answer, forward: dict[str, Answer]) -> Identity:
    """The identity from the PTR answer and the forward answers of its names (pure)."""
    address = parse_ip(ip)
    if ptr.unknown:
        return Identity(str(address), UNKNOWN, why=f"PTR look-up: {ptr.why}")
    names = ptr_names(ptr)
    if not names:
        return Identity(str(address), NONE, why="no PTR record")
    undecided = []
    for name in names:
        answer = forward.get(name)
        if answer is None or answer.unknown:
            undecided.append(name)
        elif any(_same(record, address) for record in answer.records if answer.found):
            return Identity(str(address), PASS, name, organizational_domain(name), names)
    if undecided:
        why = forward[undecided[0]].why if undecided[0] in forward else "not looked up"
        return Identity(str(address), UNKNOWN, names=names,
                        why=f"{undecided[0]}: forward look-up: {why}")
    return Identity(str(address), FAIL, names=names,
                    why=f"{', '.join(names)} does not resolve back to {address}")


def look_up(lookup: Lookup, ip: str) -> Identity:
    """PTR, then each name's A/AAAA: FCrDNS through one check run's resolver."""
    ptr = lookup.query(reverse_name(ip), "PTR")
    rdtype = forward_type(ip)
    forward = {}
    for name in ptr_names(ptr):
        forward[name] = answer = lookup.query(name, rdtype)
        if answer.found and any(_same(r, parse_ip(ip)) for r in answer.records):
            break   # the first confirmed name decides; the rest need no packet
    return confirm(ip, ptr, forward)


def _same(record: str, address) -> bool:
    try:
        return ipaddress.ip_address(record) == address
    except ValueError:
        return False
