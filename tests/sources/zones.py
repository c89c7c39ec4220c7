"""Zone text for the sources tests and bench: reverse zones, forward names, DNSBL zones."""
from __future__ import annotations

import ipaddress


def reverse_origin(network: str) -> str:
    """The reverse zone of an IPv4 /8, /16 or /24, or an IPv6 network on a nibble boundary."""
    net = ipaddress.ip_network(network)
    name = net.network_address.reverse_pointer
    drop = (32 - net.prefixlen) // 8 if net.version == 4 else (128 - net.prefixlen) // 4
    return name.split(".", drop)[-1]


def relative(name: str, origin: str) -> str:
    assert name.endswith("." + origin), (name, origin)
    return name[: -len(origin) - 1]


def ptr_lines(origin: str, names: dict[str, str | list[str]]) -> str:
    """PTR lines in `origin` for {ip: name or names}."""
    lines = []
    for ip, targets in names.items():
        owner = relative(ipaddress.ip_address(ip).reverse_pointer, origin)
        for target in [targets] if isinstance(targets, str) else targets:
            lines.append(f"{owner} IN PTR {target}.")
    return "\n".join(lines) + "\n"


def dnsbl_lines(listed: dict[str, str] | None = None, *, ipv6: bool = True,
                everything: str | None = None) -> str:
    """A DNSBL zone (names relative to it): its RFC 5782 test entries, the listed IPs with
    their codes, or a wildcard answering `everything` for any name."""
    if everything is not None:
        return f"* IN A {everything}\n"
    lines = ["2.0.0.127 IN A 127.0.0.2"]
    if ipv6:
        lines.append(nibbles("::ffff:7f00:2") + " IN A 127.0.0.2")
    for ip, code in (listed or {}).items():
        lines.append(f"{nibbles(ip)} IN A {code}")
    return "\n".join(lines) + "\n"


def nibbles(ip: str) -> str:
    """The RFC 5782 query labels of an address (without the zone)."""
    address = ipaddress.ip_address(ip)
    if address.version == 4:
        return ".".join(reversed(str(address).split(".")))
    return ".".join(reversed(address.exploded.replace(":", "")))
