"""Which addresses rua may connect to for a name someone else chose (pure, no I/O).

Public unicast only: a report, a DNS answer or a tenant's setting must not point rua at its own
host, its network or the cloud's metadata service. An IPv6 address that carries an IPv4 one
(IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) is judged by the IPv4 it carries, since
that is where the packets end up. With `allow_private` (a lab's setting) any unicast address is
allowed, but never an unspecified, multicast or reserved one.
"""
from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

# IANA's special-purpose IPv4 blocks that are not public unicast (RFC 6890 and successors).
NOT_PUBLIC_V4 = tuple(IPv4Network(block) for block in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4"))
NEVER_V4 = tuple(IPv4Network(block) for block in ("0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4"))
# Public IPv6 unicast is 2000::/3, less these (documentation, IETF protocol assignments).
PUBLIC_V6 = IPv6Network("2000::/3")
NOT_PUBLIC_V6 = tuple(IPv6Network(block) for block in (
    "2001::/23", "2001:db8::/32", "3fff::/20"))
NEVER_V6 = tuple(IPv6Network(block) for block in ("::/128", "ff00::/8"))
NAT64 = IPv6Network("64:ff9b::/96")
COMPATIBLE = IPv6Network("::/96")       # IPv4-compatible (deprecated, but still routed by some)
TEREDO = IPv6Network("2001::/32")


def allowed(address: str, *, allow_private: bool = False) -> bool:
    """Whether rua may connect to `address` (an IPv4 or IPv6 literal)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    carried = carried_ipv4(ip) if ip.version == 6 else [ip]
    if carried:
        return all(_allowed_v4(v4, allow_private) for v4 in carried)
    return _allowed_v6(ip, allow_private)


def carried_ipv4(ip: IPv6Address) -> list[IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for (none for a plain IPv6 address)."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip in NAT64 or (ip in COMPATIBLE and int(ip) > 1):
        return [IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip in TEREDO:
        server, client = ip.teredo
        return [server, client]
    return []


def _allowed_v4(ip: IPv4Address, allow_private: bool) -> bool:
    if any(ip in block for block in NEVER_V4):
        return False
    return allow_private or not any(ip in block for block in NOT_PUBLIC_V4)


def _allowed_v6(ip: IPv6Address, allow_private: bool) -> bool:
    if any(ip in block for block in NEVER_V6):
        return False
    if allow_private:
        return True
    return ip in PUBLIC_V6 and not any(ip in block for block in NOT_PUBLIC_V6)
