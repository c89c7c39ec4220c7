"""SPF: lookup counting, void lookups, includes and `all`; pure rules and a real server."""
from __future__ import annotations

import pytest

from dnscheck import spf
from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup

LIMIT_SENTENCE = ("SPF needs 11 DNS lookups; receivers stop at 10, so SPF fails for every "
                  "message: flatten or remove an include.")


def judged(domain: str, dns: dict) -> spf.Verdict:
    """Evaluate against plain answers: dns maps (name, type) or a name (TXT) to its records;
    a name absent is NXDOMAIN, a value None is SERVFAIL."""
    answers = {}
    for _ in range(spf.MAX_ROUNDS):
        found = spf.evaluate(domain, answers)
        if not found.wanted:
            return spf.verdict(domain, found)
        for name, rdtype in found.wanted:
            records = dns.get((name, rdtype), dns.get(name) if rdtype == "TXT" else None)
            known = (name, rdtype) in dns or (rdtype == "TXT" and name in dns)
            if known and records is None:
                answers[(name, rdtype)] = Answer(UNKNOWN, why="SERVFAIL")
            elif records:
                answers[(name, rdtype)] = Answer(FOUND, tuple(records))
            else:
                answers[(name, rdtype)] = Answer(MISSING, nxdomain=not known)
    raise AssertionError("evaluation did not finish")


def includes(count: int) -> dict:
    """example.com including `count` domains of one lookup-free record each."""
    dns = {f"i{n}.example.net": ["v=spf1 ip4:192.0.2.0/24 -all"] for n in range(count)}
    dns["example.com"] = ["v=spf1 " + " ".join(f"include:i{n}.example.net" for n in range(count))
                          + " -all"]
    return dns


def test_ten_lookups_are_ok_and_eleven_an_error_with_the_sentence():
    ten = judged("example.com", includes(10))
    assert (ten.status, ten.facts["lookups"]) == ("ok", 10)
    eleven = judged("example.com", includes(11))
    assert (eleven.status, eleven.facts["lookups"]) == ("error", 11)
    assert eleven.details == LIMIT_SENTENCE
    assert eleven.hosted_cta == {"label": "Fix the SPF record",
                                 "url": "/domains/example.com/dns?record=spf"}


def test_every_counted_term_counts_once_and_nested_counts_add():
    dns = {"example.com": ["v=spf1 a mx ptr exists:x.example.com include:n.example.net "
                           "ip4:192.0.2.1 ip6:2001:db8::/32 redirect=r.example.org"],
           "n.example.net": ["v=spf1 include:m.example.net a:host.example.net -all"],
           "m.example.net": ["v=spf1 mx:example.net -all"],
           ("example.com", "A"): ["192.0.2.1"], ("example.com", "MX"): ["10 mx.example.com."],
           ("x.example.com", "A"): ["127.0.0.2"], ("host.example.net", "A"): ["192.0.2.9"],
           ("example.net", "MX"): ["10 mx.example.net."],
           "r.example.org": ["v=spf1 -all"]}
    found = judged("example.com", dns)
    # a, mx, ptr, exists, include (+ its include and a:, + the mx: inside that), redirect: 9.
    assert found.facts["lookups"] == 9
    assert found.facts["includes"] == ["n.example.net", "m.example.net", "r.example.org"]


def test_redirect_is_ignored_when_the_record_has_all():
    dns = {"example.com": ["v=spf1 -all redirect=r.example.org"],
           "r.example.org": ["v=spf1 include:x.example.org -all"]}
    found = judged("example.com", dns)
    assert (found.status, found.facts["lookups"]) == ("ok", 0)


def test_the_redirect_target_decides_all():
    dns = {"example.com": ["v=spf1 redirect=r.example.org"], "r.example.org": ["v=spf1 ?all"]}
    found = judged("example.com", dns)
    assert found.status == "warning" and "?all" in found.details
    assert found.facts["record"] == "v=spf1 redirect=r.example.org"


def test_more_than_two_void_lookups_is_an_error():
    two = judged("example.com", {"example.com": ["v=spf1 a:n1.example.com mx:n2.example.com -all"]})
    assert (two.status, two.facts["void_lookups"]) == ("ok", 2)
    three = judged("example.com", {"example.com": ["v=spf1 a:n1.example.com mx:n2.example.com "
                                                   "exists:n3.example.com -all"]})
    assert (three.status, three.facts["void_lookups"]) == ("error", 3)
    assert "nothing" in three.details


def test_an_include_without_spf_is_an_error_naming_it():
    found = judged("example.com", {"example.com": ["v=spf1 include:gone.example.net -all"],
                                   "gone.example.net": ["some other text"]})
    assert found.status == "error" and "include:gone.example.net" in found.details


@pytest.mark.parametrize("ending, status", [
    ("-all", "ok"), ("~all", "ok"), ("+all", "error"), ("all", "error"), ("?all", "warning"),
    ("", "warning")])
def test_all_decides_between_ok_warning_and_error(ending, status):
    found = judged("example.com", {"example.com": [f"v=spf1 ip4:192.0.2.1 {ending}".strip()]})
    assert found.status == status
    assert (found.hosted_cta is not None) == (status == "error")


def test_none_or_two_records_are_errors():
    missing = judged("example.com", {"example.com": ["google-site-verification=x"]})
    assert missing.status == "error" and "publishes no SPF record" in missing.details
    assert missing.hosted_cta["label"] == "Publish an SPF record"
    two = judged("example.com", {"example.com": ["v=spf1 -all", "v=spf1 mx -all"]})
    assert two.status == "error" and "2 SPF records" in two.details


@pytest.mark.parametrize("term", ["ip4:300.1.1.1", "ip6:192.0.2.1", "include", "bogus:x",
                                  "all:x", "v=spf2"])
def test_a_syntax_error_is_an_error_naming_the_term(term):
    found = judged("example.com", {"example.com": [f"v=spf1 {term} -all"]})
    if term == "v=spf2":   # an unknown modifier is ignored (RFC 7208 6)
        assert found.status == "ok"
        return
    assert found.status == "error" and term.split(":")[0] in found.details


def test_dns_failure_on_a_nested_lookup_is_unknown_not_error():
    found = judged("example.com", {"example.com": ["v=spf1 include:a.example.net -all"],
                                   "a.example.net": None})
    assert found.status == "unknown" and found.facts["lookups"] is None
    assert "a.example.net" in found.details and found.hosted_cta is None


def test_an_include_loop_is_an_error_and_the_walk_ends():
    found = judged("example.com", {"example.com": ["v=spf1 include:b.example.net -all"],
                                   "b.example.net": ["v=spf1 include:example.com -all"]})
    assert found.status == "error" and "loop" in found.details


def test_macros_only_a_receiver_can_expand_are_counted_not_looked_up():
    found = judged("example.com", {"example.com": ["v=spf1 exists:%{i}._spf.example.com "
                                                   "include:%{d}.spf.example.net -all"],
                                   "example.com.spf.example.net": ["v=spf1 -all"]})
    assert (found.status, found.facts["lookups"]) == ("ok", 2)


def test_a_redirect_only_a_receiver_can_expand_is_counted_and_leaves_all_unknown():
    found = judged("example.com", {"example.com": ["v=spf1 redirect=%{l}._spf.example.com"]})
    assert (found.facts["lookups"], found.facts["includes"]) == (1, [])
    assert found.status == "warning"


def test_ptr_is_a_warning():
    found = judged("example.com", {"example.com": ["v=spf1 ptr -all"]})
    assert found.status == "warning" and "ptr" in found.details


# check() against the real server

def test_check_counts_over_the_real_server(dns_server, dns_config):
    zone = "\n".join(f'i{n} IN TXT "v=spf1 a -all"\ni{n} IN A 192.0.2.{n}' for n in range(5))
    dns_server.zone("example.net", zone)
    dns_server.zone("example.com", '@ IN TXT "v=spf1 include:i0.example.net include:i1.example.net '
                    'include:i2.example.net include:i3.example.net include:i4.example.net ~all"\n'
                    '@ IN TXT "google-site-verification=abc"')
    found = spf.check(Lookup(dns_config), "example.com")
    assert (found.status, found.facts["lookups"], found.facts["void_lookups"]) == ("ok", 10, 0)
    assert found.facts["includes"] == [f"i{n}.example.net" for n in range(5)]


def test_check_of_a_silent_include_is_unknown_within_a_few_timeouts(dns_server, dns_config):
    import time
    dns_server.zone("example.net", "")
    dns_server.fault("dead.example.net", "silent")
    dns_server.zone("example.com", '@ IN TXT "v=spf1 include:a.dead.example.net '
                    'include:b.dead.example.net mx:c.dead.example.net -all"')
    started = time.monotonic()
    found = spf.check(Lookup(dns_config), "example.com")
    assert found.status == "unknown"
    assert time.monotonic() - started < 3 * 2 * dns_config.dns_timeout


def test_check_of_a_missing_domain_is_an_error(dns_server, dns_config):
    found = spf.check(Lookup(dns_config), "nowhere.example")
    assert found.status == "error" and found.facts["lookups"] == 0


def test_offline_check_is_unknown_and_sends_nothing(dns_server, dns_config):
    dns_server.zone("example.com", '@ IN TXT "v=spf1 -all"')
    found = spf.check(Lookup(dns_config.replace(offline=True)), "example.com")
    assert (found.status, found.facts["lookups"]) == ("unknown", None)
    assert "offline" in found.details and dns_server.asked() == []
