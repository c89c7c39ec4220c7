"""DNSBL checks (RFC 5782) on a real DNS server, with zones named like the real lists."""
from __future__ import annotations

import pytest

from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup
from sources import dnsbl
from sources.dnsbl import ERROR, IPV4, IPV6, LISTED, NOT_LISTED, ZoneAnswer, outcome, query_name
from tests.sources.zones import dnsbl_lines

SPAMMER, SPAMMER6, CLEAN = "192.0.2.66", "2001:db8::66", "192.0.2.1"


def test_query_names_follow_rfc_5782():
    assert query_name("192.168.42.23", "dnsbl.example") == "23.42.168.192.dnsbl.example"
    assert query_name("2001:db8:1:2:3:4:567:89ab", "ugly.example") == (
        "b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.8.b.d.0.1.0.0.2.ugly.example")
    assert query_name("::ffff:192.0.2.7", "z.example") == "7.2.0.192.z.example"


def test_the_setting_names_each_zone_once():
    assert dnsbl.zones(" Zen.Spamhaus.org., bl.spamcop.net,,zen.spamhaus.org ") == [
        "zen.spamhaus.org", "bl.spamcop.net"]
    assert dnsbl.zones("") == []


@pytest.mark.parametrize("answer, state", [
    (Answer(MISSING, nxdomain=True), NOT_LISTED),
    (Answer(MISSING), NOT_LISTED),
    (Answer(FOUND, ("127.0.0.2",)), LISTED),
    (Answer(FOUND, ("127.0.0.11", "127.0.0.4")), LISTED),
    (Answer(FOUND, ("127.255.255.254",)), ERROR),       # Spamhaus: query through a public resolver
    (Answer(FOUND, ("127.255.255.252",)), ERROR),
    (Answer(FOUND, ("198.51.100.7",)), ERROR),          # a resolver rewriting NXDOMAIN
    (Answer(UNKNOWN, why="timed out"), dnsbl.UNKNOWN),
])
def test_what_an_answer_means(answer, state):
    assert outcome("zen.spamhaus.org", answer).state == state


def _seen(state: str) -> ZoneAnswer:
    return ZoneAnswer("z", state, ("127.0.0.2",) if state == LISTED else ())


def _pair(listed: str, not_listed: str, v6_listed: str = NOT_LISTED, v6_not: str = NOT_LISTED):
    return ({IPV4: _seen(listed), IPV6: _seen(v6_listed)},
            {IPV4: _seen(not_listed), IPV6: _seen(v6_not)})


@pytest.mark.parametrize("states, families, problem", [
    ((LISTED, NOT_LISTED, LISTED, NOT_LISTED), {IPV4, IPV6}, ""),
    ((LISTED, NOT_LISTED), {IPV4}, ""),
    ((LISTED, LISTED), set(), "lists 127.0.0.1"),
    ((LISTED, NOT_LISTED, LISTED, LISTED), set(), "lists ::ffff:7f00:1"),
    ((NOT_LISTED, NOT_LISTED), set(), "does not list its test entry"),
    ((ERROR, NOT_LISTED), set(), "refuses"),
    ((dnsbl.UNKNOWN, NOT_LISTED), set(), "could not be checked"),
])
def test_the_self_test_verdict(states, families, problem):
    test = dnsbl.judge("z", *_pair(*states))
    assert test.families == families and test.usable == bool(families)
    assert problem in test.problem and bool(problem) == bool(test.problem)


@pytest.fixture
def lists(dns_server):
    dns_server.zone("bl.spamcop.net", dnsbl_lines({SPAMMER: "127.0.0.2"}, ipv6=False))
    dns_server.zone("psbl.surriel.com", dnsbl_lines({SPAMMER: "127.0.0.2",
                                                     SPAMMER6: "127.0.0.2"}))
    dns_server.zone("dnsbl.dronebl.org", dnsbl_lines(everything="127.0.0.3"))
    dns_server.zone("zen.spamhaus.org", dnsbl_lines(everything="127.255.255.254"))
    dns_server.zone("bl.mailspike.net", "")           # up, but without its test entry
    return "zen.spamhaus.org,bl.spamcop.net,psbl.surriel.com,bl.mailspike.net,dnsbl.dronebl.org," \
           "gone.example.net"


def test_the_self_test_keeps_good_zones_and_drops_the_rest_saying_why(lists, dns_config):
    tests = {t.zone: t for t in dnsbl.self_test(Lookup(dns_config), dnsbl.zones(lists))}
    assert tests["bl.spamcop.net"].families == {IPV4}
    assert tests["psbl.surriel.com"].families == {IPV4, IPV6}
    assert "answers every query as listed" in tests["dnsbl.dronebl.org"].problem
    assert "127.255.255.254, an error code" in tests["zen.spamhaus.org"].problem
    assert "does not list its test entry 127.0.0.2" in tests["bl.mailspike.net"].problem
    assert "does not list its test entry" in tests["gone.example.net"].problem   # no such zone
    assert list(tests) == dnsbl.zones(lists)


def test_an_address_is_asked_only_of_zones_that_passed_for_its_family(lists, dns_config,
                                                                    dns_server):
    lookup = Lookup(dns_config)
    tests = dnsbl.self_test(lookup, dnsbl.zones(lists))
    v4 = {o.zone: o.state for o in dnsbl.check(lookup, SPAMMER, tests)}
    assert v4 == {"bl.spamcop.net": LISTED, "psbl.surriel.com": LISTED}
    assert {o.zone: o.state for o in dnsbl.check(lookup, CLEAN, tests)} == {
        "bl.spamcop.net": NOT_LISTED, "psbl.surriel.com": NOT_LISTED}
    v6 = dnsbl.check(lookup, SPAMMER6, tests)
    assert [(o.zone, o.state) for o in v6] == [("psbl.surriel.com", LISTED)]
    assert not dns_server.asked(query_name(SPAMMER, "dnsbl.dronebl.org"))
    assert not dns_server.asked(query_name(SPAMMER, "zen.spamhaus.org"))


def test_offline_no_zone_is_usable_and_nothing_is_asked(lists, dns_config, dns_server):
    tests = dnsbl.self_test(Lookup(dns_config.replace(offline=True)), dnsbl.zones(lists))
    assert not any(t.usable for t in tests)
    assert all("offline" in t.problem for t in tests)
    assert dns_server.asked() == []
