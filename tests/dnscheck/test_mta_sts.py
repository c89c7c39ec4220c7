"""MTA-STS: the record and policy rules on plain values, then the check against local servers."""
from __future__ import annotations

import socket

import pytest
import trustme

from dnscheck import mta_sts
from dnscheck.jobs import check_unstored
from dnscheck.policy_fetch import NOT_REACHED, PATH, Fetched
from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup
from tests.https_server import HTTPSServer
from tests.servers import arrived, free_port, listening

RECORD = Answer(FOUND, ("v=STSv1; id=20240101T000000",))
POLICY = "version: STSv1\r\nmode: enforce\r\nmx: mx1.example.com\r\nmx: *.backup.example.com\r\n" \
         "max_age: 604800\r\n"
MX = Answer(FOUND, ("10 mx1.example.com.", "20 a.backup.example.com."))


def fetched(body=POLICY, **fields) -> Fetched:
    return Fetched(**{"status": 200, "content_type": "text/plain; charset=utf-8",
                      "body": body.encode(), **fields})


# The record

@pytest.mark.parametrize("record, problem", [
    ("v=STSv1;", "no id="),
    ("v=STSv1; id=", "is not 1 to 32"),
    ("v=STSv1; id=abc-123", "is not 1 to 32"),
    ("v=STSv1; id=" + "a" * 33, "is not 1 to 32"),
    ("v=STSv1; id", "is not tag=value"),
])
def test_malformed_record_is_an_error_naming_the_fault(record, problem):
    result = mta_sts.verdict("example.com", Answer(FOUND, (record,)), None, None)
    assert result.status == "error" and problem in result.details
    assert result.hosted_cta == {"label": "Set up MTA-STS",
                                 "url": "/domains/example.com/dns?record=mta_sts"}


def test_missing_record_is_an_error_saying_what_it_would_bring():
    result = mta_sts.verdict("example.com", Answer(MISSING, why="NXDOMAIN"), None, None)
    assert result.status == "error" and result.facts["absent"] is True and "unverified TLS" in result.details
    assert result.hosted_cta["url"].endswith("record=mta_sts")


def test_records_of_other_kinds_are_ignored_and_two_of_ours_are_an_error():
    other = Answer(FOUND, ("v=spf1 -all", "google-site-verification=x"))
    assert mta_sts.verdict("example.com", other, None, None).status == "error"
    two = Answer(FOUND, ("v=STSv1; id=1", "v=STSv1; id=2"))
    assert mta_sts.verdict("example.com", two, None, None).status == "error"


def test_dns_that_cannot_tell_is_unknown_not_error():
    result = mta_sts.verdict("example.com", Answer(UNKNOWN, why="SERVFAIL"), None, None)
    assert result.status == "unknown" and "SERVFAIL" in result.details


# The policy

@pytest.mark.parametrize("body, problem", [
    ("mode: enforce\nmx: a.example\nmax_age: 1\n", "version"),
    ("version: STSv2\nmode: enforce\nmx: a.example\nmax_age: 1\n", "version"),
    ("version: STSv1\nmode: strict\nmx: a.example\nmax_age: 1\n", "mode strict"),
    ("version: STSv1\nmode: enforce\nmx: a.example\n", "max_age (none)"),
    ("version: STSv1\nmode: enforce\nmx: a.example\nmax_age: -5\n", "max_age -5"),
    ("version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 31557601\n", "over the 31557600"),
    ("version: STSv1\nmode: enforce\nmax_age: 86400\n", "no mx"),
    ("version: STSv1\nmode: enforce\nmx: a.*.example\nmax_age: 86400\n", "mx a.*.example"),
    ("version: STSv1\nmode: enforce\nmode: testing\nmx: a.example\nmax_age: 1\n", "twice"),
    ("version: STSv1\nthis line has no colon\n", "line 2"),
])
def test_invalid_policy_is_an_error_naming_the_rule(body, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")
                       .replace("*", r"\*")):
        mta_sts.parse_policy(body.encode())


def test_policy_accepts_lf_lines_unknown_fields_and_mode_none_without_mx():
    policy = mta_sts.parse_policy(b"version: STSv1\nmode: none\nmax_age: 31557600\nx-ext: 1\n")
    assert policy == mta_sts.MtaStsPolicy(mode="none", max_age=31557600, mx=())


def test_policy_that_is_not_utf8_is_refused():
    with pytest.raises(ValueError, match="UTF-8"):
        mta_sts.parse_policy(b"version: STSv1\nmode: \xff\n")


@pytest.mark.parametrize("pattern, host, covered", [
    ("mx1.example.com", "mx1.example.com", True),
    ("MX1.example.com.", "mx1.EXAMPLE.com", True),
    ("*.example.com", "mx1.example.com", True),
    ("*.example.com", "example.com", False),
    ("*.example.com", "a.b.example.com", False),
    ("mx1.example.com", "mx2.example.com", False),
])
def test_wildcard_covers_exactly_one_leftmost_label(pattern, host, covered):
    assert mta_sts.covers(pattern, host) is covered


@pytest.mark.parametrize("answer, problem", [
    (fetched(status=301, location="https://elsewhere.example/p.txt"), "redirect"),
    (fetched(status=404), "HTTP 404"),
    (fetched(content_type="text/html"), "text/html, not text/plain"),
    (fetched(content_type=""), "no content type"),
    (Fetched(problem="its certificate is not valid"), "certificate is not valid"),
])
def test_policy_not_served_as_the_rfc_says_is_an_error(answer, problem):
    result = mta_sts.verdict("example.com", RECORD, answer, MX)
    assert result.status == "error" and problem in result.details
    assert result.facts == {"id": "20240101T000000"}


def test_enforced_policy_covering_every_mx_is_ok_with_its_facts():
    result = mta_sts.verdict("example.com", RECORD, fetched(), MX)
    assert result.status == "ok" and result.hosted_cta is None
    assert result.facts == {"id": "20240101T000000", "mode": "enforce", "max_age": 604800,
                            "mx": ["mx1.example.com", "*.backup.example.com"]}


def test_mx_host_left_out_of_an_enforced_policy_is_an_error_naming_it():
    mx = Answer(FOUND, ("10 mx1.example.com.", "20 mx9.example.net."))
    result = mta_sts.verdict("example.com", RECORD, fetched(), mx)
    assert result.status == "error" and "mx9.example.net" in result.details


def test_testing_mode_is_a_warning_and_so_is_none():
    testing = mta_sts.verdict("example.com", RECORD, fetched(POLICY.replace("enforce", "testing")),
                              MX)
    assert testing.status == "warning" and "testing" in testing.details
    assert testing.facts["mode"] == "testing"
    none = mta_sts.verdict("example.com", RECORD, fetched(POLICY.replace("enforce", "none")), MX)
    assert none.status == "warning" and "mode none" in none.details


def test_no_mx_record_means_the_domain_itself_must_be_covered():
    result = mta_sts.verdict("example.com", RECORD, fetched(), Answer(MISSING, why="no MX"))
    assert result.status == "error" and "matching example.com" in result.details


def test_mx_hosts_dns_could_not_tell_leave_the_cover_unknown():
    result = mta_sts.verdict("example.com", RECORD, fetched(), Answer(UNKNOWN, why="timed out"))
    assert result.status == "unknown" and result.facts["mode"] == "enforce"


# The check against a real DNS server and a real HTTPS server

ZONE = """
@ IN MX 10 mx1.example.com.
@ IN MX 20 mx2.example.com.
_mta-sts IN TXT "v=STSv1; id=20240101T000000"
mta-sts IN A 127.0.0.1
"""
SERVED = "version: STSv1\nmode: enforce\nmx: mx1.example.com\nmx: mx2.example.com\nmax_age: 86400\n"


@pytest.fixture(scope="module")
def trusted_ca():
    return trustme.CA()


@pytest.fixture(scope="module")
def _https_module(trusted_ca):
    server = HTTPSServer(trusted_ca, ["mta-sts.example.com"]).start()
    yield server
    server.stop()


@pytest.fixture
def https(_https_module, trusted_ca, tmp_path, monkeypatch):
    """The policy server, its CA the only one the client trusts (SSL_CERT_FILE)."""
    trusted_ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    _https_module.reset()
    yield _https_module
    _https_module.reset()


def check(dns_config, server, domain="example.com"):
    """The check in a lab: the policy servers listen on 127.0.0.1, a private address."""
    return mta_sts.check(Lookup(dns_config), domain, port=server.port, allow_private=True)


def test_right_policy_over_verified_https_is_ok(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", SERVED)
    result = check(dns_config, https)
    assert result.status == "ok", result.details
    assert result.facts["mx"] == ["mx1.example.com", "mx2.example.com"]
    assert https.requests == [("mta-sts.example.com", "/.well-known/mta-sts.txt")]


def test_policy_served_as_html_is_an_error(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", SERVED, content_type="text/html")
    result = check(dns_config, https)
    assert result.status == "error" and "text/html" in result.details


def test_redirect_is_an_error_and_is_not_followed(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", "", status=302,
                 location="https://mta-sts.example.com/elsewhere.txt")
    https.answer("mta-sts.example.com", SERVED, path="/elsewhere.txt")
    result = check(dns_config, https)
    assert result.status == "error" and "HTTP 302" in result.details
    assert https.requests == [("mta-sts.example.com", "/.well-known/mta-sts.txt")]


def test_certificate_from_an_untrusted_ca_is_an_error(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    stranger = HTTPSServer(trustme.CA(), ["mta-sts.example.com"]).start()
    try:
        stranger.answer("mta-sts.example.com", SERVED)
        result = check(dns_config, stranger)
    finally:
        stranger.stop()
    assert result.status == "error" and "certificate is not valid" in result.details
    assert stranger.requests == []


def test_certificate_for_another_name_is_an_error(dns_server, dns_config, https):
    dns_server.zone("example.org", ZONE.replace("example.com", "example.org"))
    https.answer("mta-sts.example.org", SERVED)
    result = check(dns_config, https, "example.org")
    assert result.status == "error" and "not valid for mta-sts.example.org" in result.details


def test_policy_missing_an_mx_host_is_an_error(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", SERVED.replace("mx: mx2.example.com\n", ""))
    result = check(dns_config, https)
    assert result.status == "error" and "mx2.example.com" in result.details


def test_testing_mode_served_is_a_warning(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", SERVED.replace("enforce", "testing"))
    assert check(dns_config, https).status == "warning"


def test_policy_over_64_kib_is_refused(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", SERVED + "x-pad: " + "a" * 70000 + "\n")
    result = check(dns_config, https)
    assert result.status == "error" and "64 KiB" in result.details


def test_policy_host_without_address_is_an_error(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE.replace("mta-sts IN A 127.0.0.1", ""))
    result = check(dns_config, https)
    assert result.status == "error" and "no A or AAAA" in result.details
    assert https.connections == 0


def test_missing_record_is_an_error_without_fetching(dns_server, dns_config, https):
    dns_server.zone("example.com", "@ IN MX 10 mx1.example.com.")
    assert check(dns_config, https).status == "error"
    assert https.connections == 0


@pytest.mark.parametrize("failing", ["_mta-sts.example.com", "mta-sts.example.com"])
def test_servfail_on_record_or_policy_host_is_unknown(dns_server, dns_config, https, failing):
    dns_server.zone("example.com", ZONE)
    dns_server.fault(failing, "servfail")
    https.answer("mta-sts.example.com", SERVED)
    result = check(dns_config, https)
    assert result.status == "unknown", result.details
    assert https.connections == 0


def test_offline_is_unknown_without_any_connection(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", SERVED)
    result = check(dns_config.replace(offline=True), https)
    assert result.status == "unknown"
    assert https.connections == 0 and dns_server.asked() == []


def test_policy_host_that_never_answers_is_cut_off_at_the_timeout(dns_server, dns_config):
    dns_server.zone("example.com", ZONE)
    with socket.socket() as silent:  # accepts TCP (the kernel does), never speaks TLS
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        result = mta_sts.check(Lookup(dns_config), "example.com", allow_private=True,
                               port=silent.getsockname()[1], timeout=0.3)
    assert result.status == "error" and NOT_REACHED in result.details


def test_policy_host_refusing_connections_is_the_same_sentence(dns_server, dns_config):
    dns_server.zone("example.com", ZONE)
    result = mta_sts.check(Lookup(dns_config), "example.com", port=free_port(),
                           allow_private=True)
    assert result.status == "error" and NOT_REACHED in result.details
    assert "127.0.0.1" not in result.details and "port" not in result.details


def test_policy_host_trickling_bytes_is_cut_off_at_the_timeout(dns_server, dns_config, https):
    dns_server.zone("example.com", ZONE)
    https.answer("mta-sts.example.com", SERVED, trickle=0.05)
    result = mta_sts.check(Lookup(dns_config), "example.com", port=https.port, timeout=0.5,
                           allow_private=True)
    assert result.status == "error" and NOT_REACHED in result.details


# The outbound rule: a report names the domain, so its DNS may point anywhere

INSIDE = [
    "mta-sts IN A 127.0.0.2",
    "mta-sts IN AAAA ::ffff:127.0.0.2",          # IPv4-mapped
    "mta-sts IN AAAA ::127.0.0.2",               # IPv4-compatible
    "mta-sts IN AAAA 64:ff9b::7f00:2",           # NAT64
    "mta-sts IN AAAA 2002:7f00:2::1",            # 6to4
    "mta-sts IN A 10.255.255.1",
    "mta-sts IN A 169.254.169.254",
]


@pytest.fixture
def listener():
    """Listens on 127.0.0.2, to tell whether anything tried to reach it."""
    with listening("127.0.0.2") as sock:
        yield sock


@pytest.mark.parametrize("record", INSIDE)
def test_a_policy_host_inside_the_network_is_never_contacted(dns_server, dns_config, listener,
                                                             record):
    dns_server.zone("example.com", ZONE.replace("mta-sts IN A 127.0.0.1", record))
    result = mta_sts.check(Lookup(dns_config), "example.com", port=listener.getsockname()[1])
    assert not arrived(listener)
    assert result.status == "error"
    assert result.details == (f"The MTA-STS policy at https://mta-sts.example.com{PATH} could "
                              f"not be fetched: {NOT_REACHED}; senders act as if example.com "
                              "had no policy.")


def test_a_name_with_one_inside_address_among_public_ones_is_refused(dns_server, dns_config,
                                                                     listener):
    dns_server.zone("example.com", ZONE.replace("mta-sts IN A 127.0.0.1",
                                                "mta-sts IN A 127.0.0.2\nmta-sts IN A 8.8.8.8"))
    result = mta_sts.check(Lookup(dns_config), "example.com", port=listener.getsockname()[1])
    assert not arrived(listener) and NOT_REACHED in result.details


def test_the_lab_setting_lets_the_fetch_reach_a_private_address(dns_server, dns_config,
                                                                listener):
    dns_server.zone("example.com", ZONE.replace("mta-sts IN A 127.0.0.1",
                                                "mta-sts IN A 127.0.0.2"))
    mta_sts.check(Lookup(dns_config), "example.com", port=listener.getsockname()[1],
                  timeout=0.3, allow_private=True)
    assert arrived(listener)


@pytest.mark.parametrize("lab", [False, True])
def test_the_dns_check_run_follows_the_lab_setting(dns_server, dns_config, listener, lab):
    dns_server.zone("example.com", ZONE.replace("mta-sts IN A 127.0.0.1",
                                                "mta-sts IN A 127.0.0.2"))
    config = dns_config.replace(mta_sts_port=listener.getsockname()[1],
                                outbound_unsafe_allow_private=lab)
    [checked] = check_unstored(config, ["example.com"]).checks
    assert arrived(listener) is lab
    assert NOT_REACHED in checked.line()["dns"]["mta_sts"]["details"]


def test_a_record_dns_could_not_tell_about_is_written_with_an():
    result = mta_sts.verdict("example.com", Answer(UNKNOWN, why="timed out"), None, None)
    assert result.status == "unknown" and "has an MTA-STS record" in result.details
