"""The outbound rule on plain values: public unicast only; embedded IPv4 judged by what it
carries; the lab setting allows private unicast, never unspecified, multicast or reserved."""
from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address

import pytest

from guard.addresses import allowed, carried_ipv4

PUBLIC = [
    "93.184.216.34", "8.8.8.8", "1.1.1.1",
    "2606:2800:220:1:248:1893:25c8:1946", "2a00:1450:4001:82b::200e",
    "::ffff:93.184.216.34",         # IPv4-mapped
    "::5db8:d822",                  # IPv4-compatible 93.184.216.34
    "64:ff9b::5db8:d822",           # NAT64
    "2002:5db8:d822::1",            # 6to4
    "2001:0:5db8:d822:0:0:f7f7:f7f7",    # Teredo, server 93.184.216.34, client 8.8.8.8
]

# Private in the lab's sense: any unicast address that is not public.
PRIVATE = [
    "10.0.0.1", "172.16.5.4", "192.168.1.10",        # RFC 1918
    "127.0.0.1", "127.0.0.2", "::1",                  # loopback
    "169.254.169.254", "169.254.1.1", "fe80::1",      # link-local, cloud metadata
    "100.64.0.1", "100.127.255.254",                  # carrier-grade NAT
    "192.0.2.1", "198.51.100.7", "203.0.113.9",       # documentation
    "2001:db8::1", "3fff::1",
    "198.18.0.1", "192.0.0.8", "192.88.99.1",         # benchmarking, IETF, 6to4 relay
    "fd00::1", "fc00::5",                             # unique local
    "2001:2::1", "100::1",                            # IETF assignments, discard
]
EMBEDDINGS = [
    ("::ffff:{}", "IPv4-mapped"),
    ("::{}", "IPv4-compatible"),
    ("64:ff9b::{}", "NAT64"),
]
CARRIED = ["169.254.169.254", "127.0.0.1", "10.0.0.1", "100.64.0.1", "192.168.1.1",
           "192.0.2.1"]

NEVER = ["0.0.0.0", "0.1.2.3", "::", "224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1",
         "240.0.0.1", "255.255.255.255", "::ffff:0.0.0.0", "::ffff:224.0.0.1",
         "64:ff9b::e000:1", "not an address", "", "example.com"]


def sixtofour(ipv4: str) -> str:
    a, b, c, d = (int(part) for part in ipv4.split("."))
    return f"2002:{a:02x}{b:02x}:{c:02x}{d:02x}::1"


def teredo(server: str, client: str) -> str:
    """2001:0:SERVER:flags:port:CLIENT, the client's address stored inverted (RFC 4380)."""
    s = [int(p) for p in server.split(".")]
    c = [int(p) ^ 0xFF for p in client.split(".")]
    return (f"2001:0:{s[0]:02x}{s[1]:02x}:{s[2]:02x}{s[3]:02x}:0:0:"
            f"{c[0]:02x}{c[1]:02x}:{c[2]:02x}{c[3]:02x}")


def embedded(ipv4: str) -> list[str]:
    forms = [pattern.format(ipv4) for pattern, _ in EMBEDDINGS]
    return [*forms, sixtofour(ipv4), teredo(ipv4, "8.8.8.8"), teredo("8.8.8.8", ipv4)]


@pytest.mark.parametrize("address", PUBLIC)
def test_public_unicast_is_allowed(address):
    assert allowed(address)


@pytest.mark.parametrize("address", PRIVATE)
def test_private_unicast_only_in_a_lab(address):
    assert not allowed(address)
    assert allowed(address, allow_private=True)


@pytest.mark.parametrize("address", [form for ipv4 in CARRIED for form in embedded(ipv4)])
def test_embedded_ipv4_is_judged_by_the_address_it_carries(address):
    assert not allowed(address)
    assert allowed(address, allow_private=True)


@pytest.mark.parametrize("address", NEVER)
def test_unspecified_multicast_reserved_and_non_addresses_never(address):
    assert not allowed(address)
    assert not allowed(address, allow_private=True)


def test_the_forms_carry_what_they_say():
    metadata = IPv4Address("169.254.169.254")
    for form in embedded("169.254.169.254")[:4]:
        assert carried_ipv4(IPv6Address(form)) == [metadata], form
    assert carried_ipv4(IPv6Address(teredo("8.8.8.8", "169.254.169.254"))) == [
        IPv4Address("8.8.8.8"), metadata]
    assert carried_ipv4(IPv6Address("2606:2800:220:1::1")) == []
    assert carried_ipv4(IPv6Address("::1")) == []
