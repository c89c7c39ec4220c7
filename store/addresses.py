"""Sending addresses as text: one canonical spelling per address, a key that sorts them, and
the other spellings reports gave, kept on the source."""
from __future__ import annotations

import ipaddress

from store.models import Source


def unmapped(address: ipaddress.IPv4Address | ipaddress.IPv6Address):
    """The address itself, or the IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def canonical_ip(text: str) -> str:
    """An address's canonical text (IPv6 compressed, lower case; an IPv4-mapped IPv6 address as
    its IPv4), so every spelling of one address is one source; anything else as given."""
    if ":" not in text:
        return text.strip()      # an IPv4 address has one spelling (leading zeros are invalid)
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return text
    return str(unmapped(address))


def ip_key(text: str) -> str:
    """A text that sorts addresses numerically, IPv4 before IPv6, and anything else last."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return "z" + text[:64]
    return f"{address.version}{int(address):0{address.max_prefixlen // 4}x}"



def remember_spellings(org_id: str, spelled: dict[str, set[str]]) -> None:
    """Add the other texts of each canonical address ({ip: {text}}) to its Source row."""
    for ip, texts in sorted(spelled.items()):    # address order, as ingest writes shared rows
        row = Source.get_or_none(Source.org == org_id, Source.ip == ip)
        if row is None:
            continue
        known = set(row.spellings or ())
        if not texts <= known:
            (Source.update(spellings=sorted(known | texts))
             .where(Source.id == row.id).execute())


def spellings(source) -> list[str]:
    """Every text a Source row's records may give its address."""
    return [source.ip, *(source.spellings or ())]


SEARCH_LENGTH = 1000    # Source.search_text's width: a sender of many domains is found by the first


def search_text(ip: str, domains=(), ptr: str | None = None, service: str | None = None) -> str:
    """The text a source's search matches: address, PTR, service name and domains, lower case."""
    words = [ip, ptr or "", service or "", *domains]
    return " ".join(w.lower() for w in words if w)[:SEARCH_LENGTH]
