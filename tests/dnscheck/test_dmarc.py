"""DMARC: the tree walk, inheritance, syntax and the policy's gaps; pure rules and a real server."""
from __future__ import annotations

import pytest

from dnscheck import dmarc
from dnscheck.resolver import Lookup

GOOD = "v=DMARC1; p=reject; rua=mailto:dmarc@example.com"


# The tree walk (RFC 9989 4.10)

def test_walk_of_a_short_name_climbs_one_label_at_a_time():
    assert dmarc.walk_targets("a.mail.example.com") == [
        "a.mail.example.com", "mail.example.com", "example.com", "com"]


def test_walk_of_a_long_name_skips_to_seven_labels_and_asks_at_most_eight_times():
    name = "a.b.c.d.e.f.g.h.example.com"
    targets = dmarc.walk_targets(name)
    assert len(targets) == 8
    assert targets[:3] == [name, "d.e.f.g.h.example.com", "e.f.g.h.example.com"]
    assert targets[-1] == "com"
    assert [len(t.split(".")) for t in targets[1:]] == [7, 6, 5, 4, 3, 2, 1]


def test_select_prefers_the_domain_then_the_fewest_labels():
    found = [("mail.example.com", GOOD), ("example.com", GOOD)]
    assert dmarc.select("a.mail.example.com", found)[0] == "example.com"
    assert dmarc.select("a.mail.example.com", [("a.mail.example.com", GOOD)] + found)[0] \
        == "a.mail.example.com"
    assert dmarc.select("a.example.com", []) is None


def test_select_stops_at_psd_n_and_goes_one_below_psd_y():
    psd_n = "v=DMARC1; p=reject; psd=n; rua=mailto:d@mail.example.com"
    assert dmarc.select("a.mail.example.com", [("mail.example.com", psd_n)])[0] \
        == "mail.example.com"
    psd_y = "v=DMARC1; p=reject; psd=y"
    # Only the PSD publishes: its record applies, the organizational domain has none.
    assert dmarc.select("a.mail.example.com", [("com", psd_y)]) == ("com", psd_y)
    found = [("mail.example.com", GOOD), ("example.com", GOOD), ("com", psd_y)]
    assert dmarc.select("a.mail.example.com", found)[0] == "example.com"


# Syntax

@pytest.mark.parametrize("record, tag", [
    ("v=DMARC1; p=rejct", "p="),
    ("v=DMARC1; p=none; sp=drop", "sp="),
    ("v=DMARC1; p=none; pct=150", "pct="),
    ("v=DMARC1; p=none; adkim=x", "adkim="),
    ("v=DMARC1; p=none; rua=dmarc@example.com", "rua="),
    ("v=DMARC1; p=none; ruf=mailto:nobody", "ruf="),
    ("v=DMARC1; p=none; p=reject", "p="),
    ("v=dmarc1; p=none", "v=DMARC1"),
    ("v=DMARC1 p=none", "v=DMARC1"),
])
def test_a_syntax_error_is_an_error_naming_the_tag(record, tag):
    found = dmarc.verdict("example.com", "example.com", [record])
    assert found.status == "error"
    assert tag in found.details
    assert found.hosted_cta == {"label": "Fix the DMARC record",
                                "url": "/domains/example.com/dns?record=dmarc"}


def test_unknown_tags_are_ignored_and_the_size_suffix_is_not_part_of_the_address():
    found = dmarc.verdict("example.com", "example.com",
                          ["v=DMARC1; p=reject; future=1; rua=mailto:d@example.com!10m"])
    assert (found.status, found.facts["rua"]) == ("ok", ["mailto:d@example.com"])


# Verdicts

def test_a_good_record_is_ok_with_its_facts():
    found = dmarc.verdict("example.com", "example.com",
                          ["v=DMARC1; p=reject; sp=quarantine; rua=mailto:dmarc@example.com; "
                           "ruf=mailto:f@example.com"])
    assert found.status == "ok" and found.hosted_cta is None and found.inherited_from is None
    assert found.facts == {"policy": "reject", "subdomain_policy": "quarantine", "pct": 100,
                           "testing": False, "rua": ["mailto:dmarc@example.com"],
                           "ruf": ["mailto:f@example.com"], "found_at": "example.com",
                           "record": found.facts["record"], "psd": "u", "records": 1}
    assert "reject" in found.details and "mailto:dmarc@example.com" in found.details


def test_no_record_is_an_error_with_the_hosted_cta():
    found = dmarc.verdict("example.com", None, [])
    assert found.status == "error"
    assert "_dmarc.example.com" in found.details
    assert found.hosted_cta["url"] == "/domains/example.com/dns?record=dmarc"


def test_two_records_are_an_error_because_receivers_discard_both():
    found = dmarc.verdict("example.com", "example.com", [GOOD, "v=DMARC1; p=none"])
    assert found.status == "error" and "discard" in found.details
    assert found.facts["records"] == 2


@pytest.mark.parametrize("record, words", [
    ("v=DMARC1; p=none; rua=mailto:d@example.com", "p=none"),
    ("v=DMARC1; p=reject; pct=50; rua=mailto:d@example.com", "pct=50"),
    ("v=DMARC1; p=reject; t=y; rua=mailto:d@example.com", "t=y"),
    ("v=DMARC1; p=reject", "rua="),
    ("v=DMARC1; rua=mailto:d@example.com", "no p= tag"),
])
def test_a_record_not_doing_its_job_is_a_warning_saying_what_to_change(record, words):
    found = dmarc.verdict("example.com", "example.com", [record])
    assert found.status == "warning"
    assert words in found.details
    assert found.hosted_cta is None


def test_several_gaps_are_all_kept_most_urgent_first():
    found = dmarc.verdict("example.com", "example.com", ["v=DMARC1; p=none; pct=10"])
    assert found.status == "warning" and "p=none" in found.details
    assert len(found.facts["problems"]) == 3


def test_neither_policy_nor_reports_is_an_error():
    assert dmarc.verdict("example.com", "example.com", ["v=DMARC1; adkim=s"]).status == "error"


def test_an_inherited_record_names_the_parent_and_its_subdomain_policy_applies():
    found = dmarc.verdict("mail.example.com", "example.com",
                          ["v=DMARC1; p=reject; sp=quarantine; rua=mailto:d@example.com"])
    assert (found.status, found.inherited_from) == ("ok", "example.com")
    assert found.facts["policy"] == "quarantine"
    assert "_dmarc.example.com" in found.details


def test_an_external_report_host_without_authorization_is_a_warning():
    record = "v=DMARC1; p=reject; rua=mailto:d@reports.example.net"
    assert dmarc.external_hosts("example.com", ["mailto:d@reports.example.net",
                                                "mailto:x@mail.example.com"]) \
        == ["reports.example.net"]
    found = dmarc.verdict("example.com", "example.com", [record], {"reports.example.net": False})
    assert found.status == "warning"
    assert "example.com._report._dmarc.reports.example.net" in found.details
    for answer in (True, None):
        assert dmarc.verdict("example.com", "example.com", [record],
                             {"reports.example.net": answer}).status == "ok"


# check() against the real server

@pytest.fixture
def lookup(dns_config):
    return Lookup(dns_config)


def dmarc_questions(dns_server) -> list[str]:
    """The names asked, less the root: the first NXDOMAIN of a run makes the resolver ask the
    root's NS once, to tell a resolver that denies every name (dnscheck/resolver.py)."""
    return [q[0] for q in dns_server.asked() if q[0] != "."]


def test_check_finds_the_domains_own_record_with_one_query(dns_server, lookup):
    dns_server.zone("example.com", f'_dmarc IN TXT "{GOOD}"')
    found = dmarc.check(lookup, "example.com")
    assert (found.status, found.facts["found_at"]) == ("ok", "example.com")
    assert [q[0] for q in dns_server.asked()] == ["_dmarc.example.com."]


def test_check_inherits_from_the_organizational_domain(dns_server, lookup):
    dns_server.zone("example.com", f'_dmarc IN TXT "{GOOD}"\nmail IN A 192.0.2.1')
    found = dmarc.check(lookup, "a.mail.example.com")
    assert (found.status, found.inherited_from) == ("ok", "example.com")
    asked = dmarc_questions(dns_server)
    assert asked == ["_dmarc.a.mail.example.com.", "_dmarc.mail.example.com.",
                     "_dmarc.example.com.", "_dmarc.com."]


def test_check_of_a_deep_name_asks_at_most_eight_times(dns_server, lookup):
    dns_server.zone("example.com", "")
    found = dmarc.check(lookup, "a.b.c.d.e.f.g.h.i.example.com")
    assert found.status == "error"
    assert len(dmarc_questions(dns_server)) == 8


def test_check_stops_at_a_psd_record(dns_server, lookup):
    dns_server.zone("example.com", "")
    dns_server.zone("com", '_dmarc IN TXT "v=DMARC1; p=reject; psd=y"')
    found = dmarc.check(lookup, "mail.example.com")
    assert (found.status, found.inherited_from) == ("warning", "com")


def test_check_of_nothing_published_is_an_error_but_dns_failure_is_unknown(dns_server,
                                                                           dns_config):
    dns_server.zone("example.com", "")
    assert dmarc.check(Lookup(dns_config), "example.com").status == "error"
    dns_server.fault("_dmarc.example.com", "servfail")
    found = dmarc.check(Lookup(dns_config), "example.com")
    assert found.status == "unknown" and "SERVFAIL" in found.details
    assert found.hosted_cta is None


def test_a_failure_higher_up_the_walk_is_unknown_too(dns_server, lookup):
    dns_server.zone("example.com", "mail IN A 192.0.2.1")
    dns_server.fault("_dmarc.example.com", "silent")
    found = dmarc.check(lookup, "mail.example.com")
    assert found.status == "unknown" and "_dmarc.example.com" in found.details


def test_check_of_two_records_at_the_domain_is_an_error(dns_server, lookup):
    dns_server.zone("example.com", f'_dmarc IN TXT "{GOOD}"\n_dmarc IN TXT "v=DMARC1; p=none"\n'
                    '_dmarc IN TXT "not dmarc"')
    found = dmarc.check(lookup, "example.com")
    assert found.status == "error" and "2 DMARC records" in found.details


def test_check_looks_for_the_external_hosts_authorization(dns_server, dns_config):
    record = "v=DMARC1; p=reject; rua=mailto:d@reports.example.net,mailto:d@example.com"
    dns_server.zone("example.com", f'_dmarc IN TXT "{record}"')
    dns_server.zone("example.net", "")
    assert dmarc.check(Lookup(dns_config), "example.com").status == "warning"
    dns_server.zone("example.net", '*._report._dmarc.reports IN TXT "v=DMARC1"')
    assert dmarc.check(Lookup(dns_config), "example.com").status == "ok"


def test_offline_check_is_unknown_and_sends_nothing(dns_server, dns_config):
    dns_server.zone("example.com", f'_dmarc IN TXT "{GOOD}"')
    found = dmarc.check(Lookup(dns_config.replace(offline=True)), "example.com")
    assert found.status == "unknown" and "offline" in found.details
    assert dns_server.asked() == []
