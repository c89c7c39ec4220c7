"""BIMI: the record's rules and DMARC enforcement on plain values, then the check over real DNS."""
from __future__ import annotations

import pytest

from dnscheck import bimi
from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup
from dnscheck.verdict import Verdict

LOGO = "https://example.com/brand/logo.svg"
RECORD = f"v=BIMI1; l={LOGO}"
REJECT = Verdict("ok", "DMARC is at reject.", facts={"policy": "reject", "pct": 100,
                                                      "subdomain_policy": None})


def dmarc(policy, pct=100, subdomain_policy=None, status="warning", testing=False):
    return Verdict(status, "DMARC.", facts={"policy": policy, "pct": pct, "testing": testing,
                                           "subdomain_policy": subdomain_policy})


def verdict(*records: str, dmarc_verdict=REJECT):
    return bimi.verdict("example.com", Answer(FOUND, records), dmarc_verdict)


def test_svg_logo_with_dmarc_at_enforcement_is_ok_with_its_facts():
    result = verdict(RECORD + "; a=https://example.com/vmc.pem")
    assert result.status == "ok" and result.hosted_cta is None
    assert result.facts == {"logo": LOGO, "authority": "https://example.com/vmc.pem"}
    assert verdict(RECORD + ";").facts == {"logo": LOGO, "authority": None}


@pytest.mark.parametrize("record, problem", [
    ("v=BIMI1;", "no l="),
    ("v=BIMI1; l=http://example.com/logo.svg", "not an https: URL"),
    ("v=BIMI1; l=https://example.com/logo.png", "not point at an .svg"),
    ("v=BIMI1; l=https://example.com/logo.png?x=.svg", "not point at an .svg"),
    ("v=BIMI1; l=https:///logo.svg", "not an https: URL"),
    (f"v=BIMI1; l={LOGO}; a=http://example.com/vmc.pem", "a=http"),
    (f"v=BIMI1; l={LOGO}; l={LOGO}", "twice"),
])
def test_malformed_record_is_an_error_naming_the_fault(record, problem):
    result = verdict(record)
    assert result.status == "error" and problem in result.details
    assert result.hosted_cta == {"label": "Set up BIMI",
                                 "url": "/domains/example.com/dns?record=bimi"}


@pytest.mark.parametrize("dmarc_verdict, gap", [
    (dmarc("none"), "p=none"),
    (dmarc("quarantine", pct=50), "50% of mail"),
    (dmarc("reject", subdomain_policy="none"), "sp=none"),
    (dmarc("reject", testing=True), "t=y"),
    (Verdict("error", "No DMARC record."), "no policy"),
])
def test_dmarc_short_of_enforcement_is_a_warning_saying_why(dmarc_verdict, gap):
    result = verdict(RECORD, dmarc_verdict=dmarc_verdict)
    assert result.status == "warning" and gap in result.details
    assert result.facts["logo"] == LOGO


def test_quarantine_at_100_percent_is_enforcement():
    assert verdict(RECORD, dmarc_verdict=dmarc("quarantine", status="ok")).status == "ok"


def test_dmarc_dns_could_not_read_leaves_bimi_unknown():
    result = verdict(RECORD, dmarc_verdict=Verdict("unknown", "DNS could not tell."))
    assert result.status == "unknown" and result.facts["logo"] == LOGO


def test_empty_logo_declines_bimi_with_a_warning():
    result = verdict("v=BIMI1; l=; a=")
    assert result.status == "warning" and "declines" in result.details


def test_missing_two_or_unknown_records():
    missing = bimi.verdict("example.com", Answer(MISSING, why="NXDOMAIN", nxdomain=True), REJECT)
    # Optional, yet absent is "missing" as the contract words error (decisions.md).
    assert missing.status == "error" and "your logo" in missing.details
    assert missing.facts["absent"] is True
    assert missing.hosted_cta["url"].endswith("record=bimi")
    assert verdict(RECORD, RECORD).status == "error"
    unknown = bimi.verdict("example.com", Answer(UNKNOWN, why="SERVFAIL"), REJECT)
    assert unknown.status == "unknown" and "SERVFAIL" in unknown.details


def test_check_reads_default_bimi_record(dns_server, dns_config):
    dns_server.zone("example.com", f'default._bimi IN TXT "{RECORD}"')
    result = bimi.check(Lookup(dns_config), "example.com", dmarc("none"))
    assert result.status == "warning" and "p=none" in result.details
    assert dns_server.asked("default._bimi.example.com", "TXT")


def test_check_with_servfail_or_offline_is_unknown(dns_server, dns_config):
    dns_server.zone("example.com", f'default._bimi IN TXT "{RECORD}"')
    dns_server.fault("default._bimi.example.com", "servfail")
    assert bimi.check(Lookup(dns_config), "example.com", REJECT).status == "unknown"
    dns_server.reset()
    offline = bimi.check(Lookup(dns_config.replace(offline=True)), "example.com", REJECT)
    assert offline.status == "unknown" and dns_server.asked() == []
