"""TLS-RPT: the record's rules on plain values, then the check against the local DNS server."""
from __future__ import annotations

import pytest

from dnscheck import tls_rpt
from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup


def verdict(*records: str):
    return tls_rpt.verdict("example.com", Answer(FOUND, records))


@pytest.mark.parametrize("record, rua", [
    ("v=TLSRPTv1; rua=mailto:tls@example.com", ["mailto:tls@example.com"]),
    ("v=TLSRPTv1;rua=mailto:a@example.com , https://reports.example.net/tls;",
     ["mailto:a@example.com", "https://reports.example.net/tls"]),
    ("v=TLSRPTv1; rua=mailto:tls@example.com; ext_1=x", ["mailto:tls@example.com"]),
])
def test_valid_record_is_ok_and_lists_its_rua(record, rua):
    result = verdict(record)
    assert result.status == "ok" and result.hosted_cta is None
    assert result.facts == {"rua": rua, "records": 1}


@pytest.mark.parametrize("record, problem", [
    ("v=TLSRPTv1;", "no rua="),
    ("v=TLSRPTv1; rua=", "no rua="),
    ("v=TLSRPTv1; rua=http://reports.example.net/", "neither a mailto: nor an https:"),
    ("v=TLSRPTv1; rua=tls@example.com", "neither a mailto: nor an https:"),
    ("v=TLSRPTv1; rua=mailto:nobody", "not a mailto: address"),
    ("v=TLSRPTv1; rua=https:///path", "names no host"),
    ("v=TLSRPTv1; rua=mailto:a@example.com,", "(empty)"),
    ("v=TLSRPTv1; rua", "not tag=value"),
])
def test_malformed_record_is_an_error_naming_the_fault(record, problem):
    result = verdict(record)
    assert result.status == "error" and problem in result.details
    assert result.facts["rua"] == []
    assert result.hosted_cta == {"label": "Set up TLS-RPT",
                                 "url": "/domains/example.com/dns?record=tls_rpt"}


def test_two_records_are_an_error_counted_in_the_facts():
    result = verdict("v=TLSRPTv1; rua=mailto:a@example.com", "v=TLSRPTv1; rua=mailto:b@x.org")
    assert result.status == "error" and "2 v=TLSRPTv1 records" in result.details
    assert result.facts == {"rua": [], "records": 2}


def test_missing_record_is_an_error_saying_what_it_would_bring():
    for answer in (Answer(MISSING, why="NXDOMAIN", nxdomain=True),
                   Answer(FOUND, ("v=spf1 -all",)), Answer(FOUND, ("v=TLSRPTv10; rua=x",))):
        result = tls_rpt.verdict("example.com", answer)
        assert result.status == "error" and "reports of failed TLS" in result.details
        assert result.facts == {"rua": [], "records": 0, "absent": True}


def test_dns_that_cannot_tell_is_unknown():
    result = tls_rpt.verdict("example.com", Answer(UNKNOWN, why="timed out"))
    assert result.status == "unknown" and "timed out" in result.details


def test_check_reads_smtp_tls_record_split_in_strings(dns_server, dns_config):
    dns_server.zone("example.com", '_smtp._tls IN TXT "v=TLSRPTv1; " "rua=mailto:tls@example.com"')
    result = tls_rpt.check(Lookup(dns_config), "example.com")
    assert result.status == "ok" and result.facts["rua"] == ["mailto:tls@example.com"]
    assert dns_server.asked("_smtp._tls.example.com", "TXT")


def test_check_with_servfail_is_unknown_and_offline_asks_nothing(dns_server, dns_config):
    dns_server.zone("example.com", '_smtp._tls IN TXT "v=TLSRPTv1; rua=mailto:t@example.com"')
    dns_server.fault("_smtp._tls.example.com", "servfail")
    assert tls_rpt.check(Lookup(dns_config), "example.com").status == "unknown"
    dns_server.reset()
    offline = tls_rpt.check(Lookup(dns_config.replace(offline=True)), "example.com")
    assert offline.status == "unknown" and dns_server.asked() == []
