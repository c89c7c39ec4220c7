"""Cross-check: SPF lookup counting and DMARC discovery agree with checkdmarc on the same server.

checkdmarc (a test dependency only) is pointed at the fixture server through its `resolver=`
argument (its `nameservers=` takes addresses on port 53 only). It also walks the RFC 9989 tree,
so the DMARC cases below are ones where both agree by the standard. Where the two tools
legitimately differ, the cases are left out and listed here:
- checkdmarc first asks for the domain's own TXT and gives up when the domain does not exist
  (NXDOMAIN); rua walks on, as a receiver would for mail from a name with no records.
- Two DMARC records at a parent make checkdmarc stop with an error; RFC 9989 4.10 step 7
  says they are discarded and the walk goes on, which is what rua does.
- checkdmarc does not look up an `exists:` domain, so it never counts one as a void lookup;
  RFC 7208 4.6.4 counts every query that finds nothing, and rua does.
"""
from __future__ import annotations

import checkdmarc.dmarc
import checkdmarc.spf
import checkdmarc.utils
import dns.resolver
import pytest

from dnscheck import dmarc, spf
from dnscheck.resolver import Lookup


@pytest.fixture
def theirs(dns_server, dns_config):
    """A dnspython resolver aimed at the fixture server, checkdmarc's cache emptied."""
    checkdmarc.utils.DNS_CACHE.clear()
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = ["127.0.0.1"]
    resolver.port = dns_server.port
    resolver.timeout = resolver.lifetime = 2 * dns_config.dns_timeout
    yield resolver
    checkdmarc.utils.DNS_CACHE.clear()


def their_spf(domain: str, resolver) -> tuple[int, int]:
    record = checkdmarc.spf.query_spf_record(domain, resolver=resolver)["record"]
    parsed = checkdmarc.spf.parse_spf_record(record, domain, resolver=resolver,
                                             ignore_too_many_lookups=True)
    return parsed["dns_lookups"], parsed["void_dns_lookups"]


def txt(record: str) -> str:
    """A TXT record's zone-file text in strings of at most 255 characters (RFC 1035 3.3)."""
    return " ".join(f'"{record[i:i + 200]}"' for i in range(0, len(record), 200))


def their_dmarc(domain: str, resolver) -> str | None:
    try:
        return checkdmarc.dmarc.query_dmarc_record(domain, resolver=resolver)["location"]
    except checkdmarc.dmarc.DMARCRecordNotFound:
        return None


SPF_CASES = {
    "ten includes": (
        "\n".join(f'i{n} IN TXT "v=spf1 ip4:192.0.2.{n} -all"' for n in range(10)),
        "v=spf1 " + " ".join(f"include:i{n}.example.net" for n in range(10)) + " -all"),
    "twelve includes": (
        "\n".join(f'i{n} IN TXT "v=spf1 ip4:192.0.2.{n} -all"' for n in range(12)),
        "v=spf1 " + " ".join(f"include:i{n}.example.net" for n in range(12)) + " -all"),
    "nested": (
        'outer IN TXT "v=spf1 include:inner.example.net mx:mail.example.net ~all"\n'
        'inner IN TXT "v=spf1 a:host.example.net exists:probe.example.net -all"\n'
        "host IN A 192.0.2.7\nprobe IN A 127.0.0.2\nmail IN MX 10 host.example.net.\n"
        'r IN TXT "v=spf1 a:host.example.net -all"',
        "v=spf1 a mx include:outer.example.net redirect=r.example.net"),
    "two void": (
        'v1 IN TXT "v=spf1 -all"\nempty IN TXT "not spf"',
        "v=spf1 mx:empty.example.net a:gone.example.net include:v1.example.net -all"),
}


@pytest.mark.parametrize("case", sorted(SPF_CASES))
def test_spf_lookups_and_void_lookups_agree(case, dns_server, dns_config, theirs):
    net, record = SPF_CASES[case]
    dns_server.zone("example.net", net)
    dns_server.zone("example.com", f"@ IN TXT {txt(record)}\n@ IN A 192.0.2.1\n"
                    "@ IN MX 10 mail.example.com.\nmail IN A 192.0.2.2")
    ours = spf.check(Lookup(dns_config), "example.com")
    assert (ours.facts["lookups"], ours.facts["void_lookups"]) == their_spf("example.com", theirs)


def test_more_than_two_void_lookups_fail_in_both(dns_server, dns_config, theirs):
    dns_server.zone("example.com", '@ IN TXT "v=spf1 mx:n1.example.com a:n2.example.com '
                    'mx:n3.example.com -all"')
    assert spf.check(Lookup(dns_config), "example.com").status == "error"
    with pytest.raises(checkdmarc.spf.SPFTooManyVoidDNSLookups):
        their_spf("example.com", theirs)


def test_an_include_without_spf_fails_in_both(dns_server, dns_config, theirs):
    dns_server.zone("example.net", 'nospf IN TXT "hello"')
    dns_server.zone("example.com", '@ IN TXT "v=spf1 include:nospf.example.net -all"')
    assert spf.check(Lookup(dns_config), "example.com").status == "error"
    with pytest.raises(checkdmarc.spf.SPFError):
        their_spf("example.com", theirs)


GOOD = '"v=DMARC1; p=reject; rua=mailto:d@example.com"'
DMARC_CASES = {
    "own record": ("example.com", {"example.com": f"_dmarc IN TXT {GOOD}"}, "example.com"),
    "inherited": ("a.mail.example.com",
                  {"example.com": f"_dmarc IN TXT {GOOD}\na.mail IN A 192.0.2.1"}, "example.com"),
    "fewest labels": ("a.mail.example.com",
                      {"example.com": f"_dmarc IN TXT {GOOD}\n_dmarc.mail IN TXT {GOOD}\n"
                                      "a.mail IN A 192.0.2.1"}, "example.com"),
    "psd=n stops": ("a.mail.example.com",
                    {"example.com": f"_dmarc IN TXT {GOOD}\n"
                                    '_dmarc.mail IN TXT "v=DMARC1; p=reject; psd=n"\n'
                                    "a.mail IN A 192.0.2.1"}, "mail.example.com"),
    "psd=y, org has none": ("mail.example.com",
                            {"example.com": "mail IN A 192.0.2.1",
                             "com": '_dmarc IN TXT "v=DMARC1; p=reject; psd=y"'}, "com"),
    "psd=y, org has one": ("a.mail.example.com",
                           {"example.com": f"_dmarc IN TXT {GOOD}\na.mail IN A 192.0.2.1",
                            "com": '_dmarc IN TXT "v=DMARC1; p=reject; psd=y"'}, "example.com"),
    "deep name": ("a.b.c.d.e.f.g.h.example.com",
                  {"example.com": f"_dmarc IN TXT {GOOD}\na.b.c.d.e.f.g.h IN A 192.0.2.1"},
                  "example.com"),
    "none": ("mail.example.com", {"example.com": "mail IN A 192.0.2.1"}, None),
}


@pytest.mark.parametrize("case", sorted(DMARC_CASES))
def test_dmarc_discovery_agrees(case, dns_server, dns_config, theirs):
    domain, zones, expected = DMARC_CASES[case]
    for origin, text in zones.items():
        dns_server.zone(origin, text)
    ours = dmarc.check(Lookup(dns_config), domain)
    assert ours.facts.get("found_at") == their_dmarc(domain, theirs) == expected
    assert ours.inherited_from == (expected if expected not in (None, domain) else None)
