"""The resolver keeps "found", "does not exist" and "could not tell" apart, on a real server."""
from __future__ import annotations

import time

import pytest

from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Lookup, gather

ZONE = """
@            IN MX  10 mx.example.com.
@            IN TXT "v=spf1 " "-all"
mx           IN A   192.0.2.25
only-a       IN A   192.0.2.1
alias        IN CNAME target
target       IN TXT "behind a cname"
dangling     IN CNAME nowhere
*.wild       IN TXT "wildcard"
a.b.deep     IN TXT "leaf"
"""


@pytest.fixture
def lookup(dns_server, dns_config):
    dns_server.zone("example.com", ZONE)
    return Lookup(dns_config)


def test_found_joins_the_strings_of_one_txt_record(lookup):
    answer = lookup.txt("example.com")
    assert answer.outcome == FOUND
    assert answer.records == ("v=spf1 -all",)
    assert not answer.authenticated


def test_other_types_come_back_as_their_text(lookup):
    assert lookup.query("example.com", "MX").records == ("10 mx.example.com.",)
    assert lookup.query("mx.example.com", "A").records == ("192.0.2.25",)


def test_nxdomain_is_missing_and_says_the_name_does_not_exist(lookup):
    answer = lookup.txt("nothing.example.com")
    assert (answer.outcome, answer.nxdomain, answer.why) == (MISSING, True, "NXDOMAIN")


def test_nodata_is_missing_but_the_name_exists(lookup):
    answer = lookup.txt("only-a.example.com")
    assert (answer.outcome, answer.nxdomain, answer.why) == (MISSING, False, "no TXT record")


def test_an_empty_non_terminal_is_nodata_not_nxdomain(lookup):
    answer = lookup.txt("b.deep.example.com")
    assert (answer.outcome, answer.nxdomain) == (MISSING, False)


def test_cname_is_followed(lookup):
    assert lookup.txt("alias.example.com").records == ("behind a cname",)
    assert lookup.txt("dangling.example.com").nxdomain


def test_wildcard_answers_for_any_name_under_it(lookup):
    assert lookup.txt("anything.wild.example.com").records == ("wildcard",)
    assert lookup.txt("wild.example.com").outcome == MISSING


def test_outside_the_zones_served_a_name_is_nxdomain_and_a_parent_of_one_nodata(lookup):
    assert lookup.txt("example.org").nxdomain
    assert lookup.txt("_dmarc.com").nxdomain
    answer = lookup.txt("com")
    assert (answer.outcome, answer.nxdomain) == (MISSING, False)


def test_refused_is_unknown_not_missing(dns_server, lookup):
    dns_server.fault("example.com", "refused")
    answer = lookup.txt("example.com")
    assert (answer.outcome, answer.why) == (UNKNOWN, "REFUSED")


def test_servfail_is_unknown_not_missing(dns_server, lookup):
    dns_server.fault("broken.example.com", "servfail")
    answer = lookup.txt("_dmarc.broken.example.com")
    assert (answer.outcome, answer.why) == (UNKNOWN, "SERVFAIL")


def test_silence_is_unknown_within_two_timeouts(dns_server, dns_config, lookup):
    dns_server.fault("quiet.example.com", "silent")
    started = time.monotonic()
    answer = lookup.txt("quiet.example.com")
    elapsed = time.monotonic() - started
    assert (answer.outcome, answer.why) == (UNKNOWN, "timed out")
    assert dns_config.dns_timeout <= elapsed < 2 * dns_config.dns_timeout + 0.5


def test_an_unreachable_nameserver_is_unknown(dns_server, dns_config):
    from tests.servers import free_port
    answer = Lookup(dns_config.replace(dns_port=free_port())).txt("example.com")
    assert answer.outcome == UNKNOWN


def test_a_nameserver_that_is_not_an_address_is_a_clear_error(dns_config):
    from config import ConfigError
    with pytest.raises(ConfigError, match="RUA_DNS_NAMESERVERS: 'dns.example' is not an IP"):
        Lookup(dns_config.replace(dns_nameservers="127.0.0.1, dns.example"))


def test_offline_answers_unknown_without_sending_a_packet(dns_server, dns_config):
    dns_server.zone("example.com", ZONE)
    answer = Lookup(dns_config.replace(offline=True)).txt("example.com")
    assert (answer.outcome, answer.why) == (UNKNOWN, "offline (RUA_OFFLINE=1)")
    assert dns_server.asked() == []


def test_truncated_udp_answer_is_retried_over_tcp(dns_server, lookup):
    dns_server.fault("example.com", "truncate")
    assert lookup.txt("example.com").records == ("v=spf1 -all",)
    assert [q[2] for q in dns_server.asked("example.com", "TXT")] == ["udp", "tcp"]


def test_an_answer_too_big_for_udp_comes_over_tcp(dns_server, dns_config):
    strings = " ".join(f'"{"k" * 250}"' for _ in range(8))
    dns_server.zone("big.example", f"@ IN TXT {strings}")
    answer = Lookup(dns_config).txt("big.example")
    assert answer.records == ("k" * 2000,)
    assert [q[2] for q in dns_server.asked("big.example")] == ["udp", "tcp"]


def test_the_ad_bit_is_reported(dns_server, lookup):
    dns_server.fault("mx.example.com", "authenticated")
    assert lookup.query("mx.example.com", "A").authenticated
    assert not lookup.query("example.com", "MX").authenticated


def test_one_lookup_never_asks_the_same_question_twice(dns_server, lookup):
    answers = gather({str(n): (lambda: lookup.txt("Example.COM.")) for n in range(6)})
    assert set(answers.values()) == {lookup.txt("example.com")}
    assert len(dns_server.asked("example.com", "TXT")) == 1


@pytest.mark.slow
def test_a_silent_nameserver_holds_gather_a_few_timeouts_not_one_per_query(dns_server,
                                                                            dns_config, lookup):
    dns_server.fault("quiet.example.com", "silent")
    calls = {f"quiet{n}": (lambda n=n: lookup.txt(f"s{n}.quiet.example.com")) for n in range(16)}
    calls["spf"] = lambda: lookup.txt("example.com")
    started = time.monotonic()
    answers = gather(calls, bound=8)
    elapsed = time.monotonic() - started
    assert answers["spf"].outcome == FOUND
    assert {answers[f"quiet{n}"].why for n in range(16)} == {"timed out"}
    # 17 look-ups, 8 at a time: three rounds of at most two timeouts each, never 17 x 2.
    assert elapsed < 3 * 2 * dns_config.dns_timeout + 1.0


def test_gather_keeps_the_keys_and_runs_nothing_for_nothing():
    assert gather({}) == {}
    assert gather({"a": lambda: 1, "b": lambda: 2}, bound=1) == {"a": 1, "b": 2}


def test_one_silent_name_leaves_the_resolver_trusted(dns_server, lookup):
    dns_server.fault("quiet.example.com", "silent")
    assert lookup.txt("quiet.example.com").why == "timed out"
    assert lookup.dead == "" and lookup.txt("example.com").found


@pytest.mark.parametrize("fault, said", [
    ("silent", "resolver 127.0.0.1 did not answer"),
    ("nxdomain", "resolver 127.0.0.1 says no name exists, not even the root (a broken or "
                 "captive resolver)"),
])
def test_a_resolver_that_answers_nothing_or_denies_every_name_is_found_out_once(
        dns_server, lookup, fault, said):
    dns_server.fault(".", fault)
    first = lookup.txt("example.com")
    assert first.unknown and not first.nxdomain and first.why == said == lookup.dead
    asked = len(dns_server.asked())
    # Every later look-up is told at once, without a packet.
    assert lookup.txt("other.example.com").why == lookup.dead
    assert len(dns_server.asked()) == asked


def test_a_name_that_does_not_exist_leaves_an_honest_resolver_trusted(dns_server, lookup):
    dns_server.zone("example.com", '@ IN TXT "v=spf1 -all"')
    missing = lookup.txt("nowhere.example.com")
    assert missing.missing and missing.nxdomain and lookup.dead == ""
    assert lookup.txt("example.com").found
