"""FCrDNS on a real DNS server: reverse zones (in-addr.arpa, ip6.arpa), confirmation both ways."""
from __future__ import annotations

import pytest

from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup
from sources.identity import (FAIL, NONE, PASS, InvalidIP, confirm, look_up, parse_ip,
                              reverse_name)
from sources.identity import UNKNOWN as UNKNOWN_ID
from tests.sources.zones import ptr_lines, reverse_origin

V4 = reverse_origin("192.0.2.0/24")
V6 = reverse_origin("2001:db8::/32")


@pytest.fixture
def lookup(dns_server, dns_config):
    dns_server.zone(V4, ptr_lines(V4, {
        "192.0.2.10": "mail-sor-f41.google.com",        # confirmed below
        "192.0.2.11": "spoof.google.com",               # forward name points elsewhere
        "192.0.2.12": ["zz.sender.example", "aa.nowhere.example"],   # the second confirms
        "192.0.2.13": "localhost",
        "192.0.2.14": "o1.relay.broken.example",
    }))
    dns_server.zone(V6, ptr_lines(V6, {"2001:db8::25": "mx.sender.example"}))
    dns_server.zone("google.com", "mail-sor-f41 IN A 192.0.2.10\nspoof IN A 198.51.100.1\n")
    dns_server.zone("sender.example", "zz IN A 192.0.2.12\nmx IN AAAA 2001:db8::25\n"
                                      "mx IN A 192.0.2.99\n")
    dns_server.zone("broken.example", "")
    dns_server.fault("relay.broken.example", "servfail")
    return Lookup(dns_config)


def test_a_ptr_name_that_resolves_back_is_trusted_with_its_base_domain(lookup):
    found = look_up(lookup, "192.0.2.10")
    assert (found.fcrdns, found.ptr, found.base_domain) == (PASS, "mail-sor-f41.google.com",
                                                            "google.com")


def test_a_ptr_name_that_resolves_elsewhere_is_not_trusted(lookup):
    found = look_up(lookup, "192.0.2.11")
    assert (found.fcrdns, found.ptr, found.base_domain) == (FAIL, None, None)
    assert found.names == ("spoof.google.com",) and "does not resolve back" in found.why


def test_of_several_ptr_names_the_one_that_confirms_is_taken(lookup):
    found = look_up(lookup, "192.0.2.12")
    assert (found.fcrdns, found.ptr) == (PASS, "zz.sender.example")
    assert found.names == ("aa.nowhere.example", "zz.sender.example")


def test_ipv6_is_looked_up_under_ip6_arpa_and_confirmed_by_aaaa(lookup, dns_server):
    found = look_up(lookup, "2001:DB8:0:0::25")
    assert (found.fcrdns, found.ptr, found.ip) == (PASS, "mx.sender.example", "2001:db8::25")
    assert dns_server.asked(reverse_name("2001:db8::25"), "PTR")
    assert dns_server.asked("mx.sender.example", "AAAA")
    assert not dns_server.asked("mx.sender.example", "A")


def test_no_ptr_record_is_none_and_an_invalid_name_is_no_name(lookup):
    assert look_up(lookup, "192.0.2.200").fcrdns == NONE
    assert look_up(lookup, "192.0.2.13").fcrdns == NONE
    assert look_up(lookup, "203.0.113.5").fcrdns == NONE      # no reverse zone at all


def test_a_forward_lookup_that_fails_leaves_it_unknown_not_failed(lookup):
    found = look_up(lookup, "192.0.2.14")
    assert (found.fcrdns, found.ptr) == (UNKNOWN_ID, None) and "SERVFAIL" in found.why


def test_a_ptr_lookup_that_fails_is_unknown(dns_server, dns_config):
    dns_server.zone(V4, "")
    dns_server.fault(V4, "servfail")
    assert look_up(Lookup(dns_config), "192.0.2.10").fcrdns == UNKNOWN_ID


def test_offline_sends_nothing_and_knows_nothing(dns_server, dns_config):
    found = look_up(Lookup(dns_config.replace(offline=True)), "192.0.2.10")
    assert (found.fcrdns, found.ptr, found.base_domain) == (UNKNOWN_ID, None, None)
    assert dns_server.asked() == []


def test_an_ipv4_mapped_address_is_its_ipv4_address(lookup):
    assert str(parse_ip("::ffff:192.0.2.10")) == "192.0.2.10"
    assert look_up(lookup, "::ffff:192.0.2.10").ptr == "mail-sor-f41.google.com"


@pytest.mark.parametrize("text", ["", "192.0.2", "192.0.2.256", "example.com", "1::2::3"])
def test_not_an_address_is_a_clear_error(text):
    with pytest.raises(InvalidIP, match="is not an IP address"):
        parse_ip(text)


def test_confirm_is_pure_over_answers():
    ptr = Answer(FOUND, ("Mail.Example.COM.",))
    yes = Answer(FOUND, ("192.0.2.1",))
    assert confirm("192.0.2.1", ptr, {"mail.example.com": yes}).ptr == "mail.example.com"
    assert confirm("192.0.2.1", ptr, {"mail.example.com": Answer(MISSING)}).fcrdns == FAIL
    assert confirm("192.0.2.1", ptr, {"mail.example.com": Answer(UNKNOWN)}).fcrdns == UNKNOWN_ID
    assert confirm("192.0.2.1", Answer(MISSING, nxdomain=True), {}).fcrdns == NONE
