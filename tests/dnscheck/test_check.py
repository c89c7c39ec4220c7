"""check_domain on the real test DNS server: every kind at once, the states, offline, silence."""
from __future__ import annotations

import datetime
import time

import pytest

from dnscheck.check import KINDS, check_domain, selectors_for
from dnscheck.resolver import Lookup
from tests.dnscheck.zones import REPORT_ADDRESS, serve

NOW = datetime.datetime(2026, 3, 31, 12, 0, 0)
LINE_KEYS = {"domain", "checked_at", "dns", "dmarc_state", "tlsrpt_state", "forensic_state",
             "verified_source", "inherited_from", "spf_lookups"}


def run(config, domain="good.example", selectors=("s1",), address=REPORT_ADDRESS):
    return check_domain(Lookup(config), domain, selectors=list(selectors),
                        report_address=address, mta_sts_port=config.mta_sts_port, now=NOW)


def test_a_domain_with_its_records_right_is_ok_and_verified(dns_server, dns_config):
    serve(dns_server, "good.example")
    result = run(dns_config)
    assert {k: result.dns[k]["status"] for k in ("dmarc", "spf", "dkim")} == dict.fromkeys(
        ("dmarc", "spf", "dkim"), "ok")
    assert set(result.dns) == set(KINDS)
    assert result.dns["dmarc"]["policy"] == "reject" and result.spf_lookups == 0
    assert (result.states["dmarc_state"], result.states["verified_source"]) == ("verified", "self")
    assert result.states["tlsrpt_state"] == "verified" and result.states["tlsrpt_enabled"]
    assert result.checked_at == NOW


def test_the_json_line_has_exactly_the_fields_the_issue_lists(dns_server, dns_config):
    serve(dns_server, "good.example")
    line = run(dns_config).line()
    assert set(line) == LINE_KEYS and set(line["dns"]) == set(KINDS)
    for entry in line["dns"].values():
        assert set(entry) <= {"status", "details", "inherited_from"}
    assert line["spf_lookups"] == 0 and line["domain"] == "good.example"


def test_a_subdomain_without_a_record_inherits_its_parents_and_says_from_where(dns_server,
                                                                              dns_config):
    serve(dns_server, "good.example", extra="sub IN A 192.0.2.9\n")
    result = run(dns_config, "sub.good.example")
    assert result.dns["dmarc"]["inherited_from"] == "good.example"
    assert result.states["dmarc_state"] == "verified_inherited"
    assert (result.states["verified_source"], result.states["inherited_from"]) == (
        "inherited", "good.example")
    assert result.line()["dns"]["dmarc"]["inherited_from"] == "good.example"


def test_a_record_reporting_elsewhere_is_published_not_ours(dns_server, dns_config):
    serve(dns_server, "good.example", dmarc="v=DMARC1; p=none; rua=mailto:d@good.example")
    result = run(dns_config)
    assert result.states["dmarc_state"] == "published_not_ours"
    assert result.dns["dmarc"]["status"] == "warning"     # p=none


def test_missing_records_are_errors_and_not_published(dns_server, dns_config):
    serve(dns_server, "good.example", dmarc=None, spf=None)
    result = run(dns_config)
    assert (result.dns["dmarc"]["status"], result.dns["spf"]["status"]) == ("error", "error")
    assert result.states["dmarc_state"] == "not_published"
    assert result.dns["spf"]["hosted_cta"]["url"] == "/domains/good.example/dns?record=spf"


def test_offline_every_kind_is_unknown_and_no_state_is_invented(dns_server, config):
    result = run(config.replace(offline=True))
    assert {entry["status"] for entry in result.dns.values()} == {"unknown"}
    assert {result.states[f] for f in ("dmarc_state", "tlsrpt_state", "forensic_state")} <= {
        "unconfirmed", "pending"}
    assert result.states["verified_source"] == "" and result.spf_lookups is None
    assert dns_server.asked() == []


def test_a_silent_nameserver_costs_a_few_timeouts_and_tells_nothing(dns_server, dns_config):
    serve(dns_server, "good.example")
    dns_server.fault("good.example", "silent")
    started = time.monotonic()
    result = run(dns_config)
    elapsed = time.monotonic() - started
    assert {result.dns[k]["status"] for k in ("dmarc", "spf", "dkim")} == {"unknown"}
    assert result.states["dmarc_state"] == "unconfirmed"
    # Sequential look-ups would be 2 timeouts each for a dozen names; gathered, a few.
    assert elapsed < 6 * dns_config.dns_timeout, elapsed


def test_servfail_is_unknown_never_missing(dns_server, dns_config):
    serve(dns_server, "good.example")
    dns_server.fault("_dmarc.good.example", "servfail")
    result = run(dns_config)
    assert result.dns["dmarc"]["status"] == "unknown"
    assert result.states["dmarc_state"] == "unconfirmed"


def test_bimi_is_judged_after_dmarc_with_its_policy(dns_server, dns_config):
    serve(dns_server, "good.example", dmarc=f"v=DMARC1; p=none; rua=mailto:{REPORT_ADDRESS}",
          extra='default._bimi IN TXT "v=BIMI1; l=https://good.example/logo.svg"\n')
    assert run(dns_config).dns["bimi"]["status"] == "warning"     # p=none is not enforcement
    assert len(dns_server.asked("default._bimi.good.example", "TXT")) == 1   # asked once


@pytest.mark.parametrize("reported, configured, expected", [
    (["s1"], "default, s1,google", ["s1", "default", "google"]),
    (None, "", []),
    ([], "k1", ["k1"]),
])
def test_selectors_are_the_reported_ones_then_the_configured_ones_once_each(reported, configured,
                                                                            expected):
    assert selectors_for(reported, configured) == expected
