"""DANE: TLSA rules on plain values, then MX and TLSA look-ups against the local DNS server."""
from __future__ import annotations

import pytest

from dnscheck import dane
from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup

DIGEST = "ab" * 32
MX = Answer(FOUND, ("20 mx2.example.com.", "10 mx1.example.com."))
SIGNED = Answer(FOUND, (f"3 1 1 {DIGEST}",), authenticated=True)


def verdict(mx=MX, **tlsa):
    return dane.verdict("example.com", mx, {f"mx{n}.example.com": answer
                                            for n, answer in tlsa.items()})


@pytest.mark.parametrize("record, is_usable", [
    (f"3 1 1 {DIGEST}", True),
    (f"2 0 1 {DIGEST[:32]} {DIGEST[32:]}", True),
    (f"3 1 2 {DIGEST * 2}", True),
    ("3 0 0 3082010a", True),
    (f"1 1 1 {DIGEST}", False),
    (f"0 0 1 {DIGEST}", False),
    (f"3 1 1 {DIGEST[:-2]}", False),
    (f"3 2 1 {DIGEST}", False),
    (f"3 1 3 {DIGEST}", False),
    ("3 1 1", False),
])
def test_usable_tlsa_needs_a_dane_usage_and_a_digest_of_the_right_length(record, is_usable):
    assert dane.usable(record) is is_usable


def test_every_mx_with_validated_tlsa_is_ok_with_hosts_best_first():
    result = verdict(**{"1": SIGNED, "2": SIGNED})
    assert result.status == "ok"
    assert result.facts == {"hosts": [
        {"mx": "mx1.example.com", "tlsa": 1, "authenticated": True},
        {"mx": "mx2.example.com", "tlsa": 1, "authenticated": True}]}


def test_no_tlsa_anywhere_is_an_error_that_explains_dane():
    none = Answer(MISSING, why="NXDOMAIN", nxdomain=True)
    result = verdict(**{"1": none, "2": none})
    assert result.status == "error" and result.facts["absent"] is True
    assert "_25._tcp.mx1.example.com" in result.details
    assert "DNSSEC" in result.details and result.hosted_cta is None


def test_tlsa_without_the_ad_bit_is_a_warning():
    plain = Answer(FOUND, SIGNED.records, authenticated=False)
    result = verdict(**{"1": SIGNED, "2": plain})
    assert result.status == "warning" and "mx2.example.com" in result.details
    assert "not DNSSEC-validated" in result.details
    assert result.facts["hosts"][1] == {"mx": "mx2.example.com", "tlsa": 1,
                                        "authenticated": False}


def test_one_mx_without_tlsa_is_a_warning_naming_it():
    result = verdict(**{"1": SIGNED, "2": Answer(MISSING, why="no TLSA record")})
    assert result.status == "warning" and result.details.startswith("mx2.example.com")


def test_only_unusable_tlsa_for_a_host_is_an_error():
    pkix = Answer(FOUND, (f"1 1 1 {DIGEST}",), authenticated=True)
    result = verdict(**{"1": SIGNED, "2": pkix})
    assert result.status == "error" and "_25._tcp.mx2.example.com" in result.details


def test_null_mx_means_no_mail_and_nothing_to_protect():
    result = dane.verdict("example.com", Answer(FOUND, ("0 .",)), {})
    assert result.status == "ok" and result.facts == {"hosts": []}


def test_dns_that_cannot_tell_is_unknown():
    assert verdict(mx=Answer(UNKNOWN, why="SERVFAIL")).status == "unknown"
    result = verdict(**{"1": SIGNED, "2": Answer(UNKNOWN, why="timed out")})
    assert result.status == "unknown" and "timed out" in result.details


ZONE = f"""
@ IN MX 10 mx1.example.com.
@ IN MX 20 mx2.example.com.
_25._tcp.mx1 IN TLSA 3 1 1 {DIGEST}
_25._tcp.mx2 IN TLSA 3 1 1 {DIGEST}
"""


def test_check_with_ad_bit_on_every_tlsa_is_ok(dns_server, dns_config):
    dns_server.zone("example.com", ZONE)
    dns_server.fault("example.com", "authenticated")
    result = dane.check(Lookup(dns_config), "example.com")
    assert result.status == "ok", result.details
    assert len(dns_server.asked(rdtype="TLSA")) == 2


def test_check_without_ad_bit_warns(dns_server, dns_config):
    dns_server.zone("example.com", ZONE)
    result = dane.check(Lookup(dns_config), "example.com")
    assert result.status == "warning" and "not DNSSEC-validated" in result.details


def test_check_of_a_domain_without_mx_looks_at_the_domain_itself(dns_server, dns_config):
    dns_server.zone("example.com", "@ IN A 192.0.2.1")
    result = dane.check(Lookup(dns_config), "example.com")
    assert result.status == "error"
    assert dns_server.asked("_25._tcp.example.com", "TLSA")


def test_check_of_null_mx_asks_no_tlsa(dns_server, dns_config):
    dns_server.zone("example.com", "@ IN MX 0 .")
    assert dane.check(Lookup(dns_config), "example.com").status == "ok"
    assert dns_server.asked(rdtype="TLSA") == []


def test_check_with_servfail_or_offline_is_unknown(dns_server, dns_config):
    dns_server.zone("example.com", ZONE)
    dns_server.fault("_25._tcp.mx2.example.com", "servfail")
    assert dane.check(Lookup(dns_config), "example.com").status == "unknown"
    dns_server.reset()
    offline = dane.check(Lookup(dns_config.replace(offline=True)), "example.com")
    assert offline.status == "unknown" and dns_server.asked() == []
