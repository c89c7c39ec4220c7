"""Sending addresses as text: one canonical spelling per address, and a key that sorts them."""
from __future__ import annotations

import ipaddress


def canonical_ip(text: str) -> str:
    """An address's canonical text (IPv6 compressed, lower case; an IPv4-mapped IPv6 address as
    its IPv4), so every spelling of one address is one source; anything else as given."""
    try:
        address = ipaddress.ip_address(text.strip())
    except (ValueError, AttributeError):
        return text
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return str(address)


def ip_key(text: str) -> str:
    """A text that sorts addresses numerically, IPv4 before IPv6, and anything else last."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return "z" + text[:64]
    return f"{address.version}{int(address):0{address.max_prefixlen // 4}x}"
