"""DKIM: key type and size, revoked keys, the best usable key; pure rules and a real server."""
from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from dnscheck import dkim
from dnscheck.resolver import FOUND, MISSING, UNKNOWN, Answer, Lookup


def rsa_key(bits: int, pkcs1: bool = False) -> str:
    if bits < 1024:  # cryptography will not generate one this small: build its numbers
        public = rsa.RSAPublicNumbers(65537, (1 << (bits - 1)) | 1).public_key()
    else:
        public = rsa.generate_private_key(65537, bits).public_key()
    form = serialization.PublicFormat.PKCS1 if pkcs1 else \
        serialization.PublicFormat.SubjectPublicKeyInfo
    return base64.b64encode(public.public_bytes(serialization.Encoding.DER, form)).decode()


def ed_key() -> str:
    public = ed25519.Ed25519PrivateKey.generate().public_key()
    return base64.b64encode(public.public_bytes(serialization.Encoding.Raw,
                                                serialization.PublicFormat.Raw)).decode()


RSA = {bits: rsa_key(bits) for bits in (512, 1024, 2048)}


def found(*records: str) -> Answer:
    return Answer(FOUND, records)


NONE = Answer(MISSING, why="NXDOMAIN", nxdomain=True)


@pytest.mark.parametrize("record, kind, bits, status", [
    (f"v=DKIM1; k=rsa; p={RSA[512]}", "rsa", 512, "error"),
    (f"v=DKIM1; k=rsa; p={RSA[1024]}", "rsa", 1024, "warning"),
    (f"v=DKIM1; p={RSA[2048]}", "rsa", 2048, "ok"),
    (f"v=DKIM1; p={rsa_key(1024, pkcs1=True)}", "rsa", 1024, "warning"),
    (f"v=DKIM1; k=ed25519; p={ed_key()}", "ed25519", None, "ok"),
    ("v=DKIM1; k=rsa; p=", "rsa", None, "warning"),
    ("v=DKIM1; k=rsa; p=bm90IGEga2V5", "rsa", None, "error"),
    ("v=DKIM1; k=rsa; p=%%%", "rsa", None, "error"),
    ("v=DKIM1; k=dsa; p=AAAA", "dsa", None, "error"),
    ("v=DKIM2; p=AAAA", "rsa", None, "error"),
], ids=["rsa-512", "rsa-1024", "rsa-2048-no-k", "rsa-1024-pkcs1", "ed25519", "revoked",
        "not-a-key", "not-base64", "dsa", "dkim2"])
def test_each_key_is_judged_by_type_and_size(record, kind, bits, status):
    key, sentence = dkim.judge_key("s1", "example.com", record)
    assert key == {"selector": "s1", "type": kind, "bits": bits, "status": status}
    assert "s1._domainkey.example.com" in sentence


def test_a_key_split_over_strings_and_spaces_is_read_whole():
    spaced = " ".join(RSA[2048][i:i + 60] for i in range(0, len(RSA[2048]), 60))
    key, _ = dkim.judge_key("s1", "example.com", f"v=DKIM1; p={spaced}")
    assert key["bits"] == 2048


def test_the_verdict_is_the_best_usable_keys_and_names_the_selectors_found():
    answers = {"old": found(f"v=DKIM1; p={RSA[1024]}"), "new": found(f"v=DKIM1; p={RSA[2048]}"),
               "none": NONE}
    verdict = dkim.verdict("example.com", ["old", "new", "none"], answers)
    assert verdict.status == "ok"
    assert "Keys found at: old, new." in verdict.details
    assert "1024-bit" in verdict.details   # the weak one is still pointed out
    assert [k["selector"] for k in verdict.facts["keys"]] == ["old", "new"]
    assert verdict.hosted_cta is None


def test_only_weak_or_broken_keys_give_their_status():
    weak = dkim.verdict("example.com", ["s1"], {"s1": found(f"p={RSA[1024]}")})
    assert (weak.status, weak.hosted_cta) == ("warning", None)
    broken = dkim.verdict("example.com", ["s1"], {"s1": found(f"p={RSA[512]}")})
    assert broken.status == "error"
    assert broken.hosted_cta == {"label": "Fix the DKIM key",
                                 "url": "/domains/example.com/dns?record=dkim"}


def test_no_selector_known_is_unknown_not_error():
    verdict = dkim.verdict("example.com", [], {})
    assert verdict.status == "unknown" and "No DKIM selector is known" in verdict.details


def test_no_key_at_any_selector_is_unknown_naming_the_selectors_tried():
    verdict = dkim.verdict("example.com", ["a", "b"], {"a": NONE, "b": found("some text")})
    assert verdict.status == "unknown" and "(a, b)" in verdict.details


def test_dns_failure_without_a_key_is_unknown_but_a_key_found_still_counts():
    failed = Answer(UNKNOWN, why="SERVFAIL")
    verdict = dkim.verdict("example.com", ["a"], {"a": failed})
    assert verdict.status == "unknown" and "SERVFAIL" in verdict.details
    verdict = dkim.verdict("example.com", ["a", "b"],
                           {"a": failed, "b": found(f"p={RSA[2048]}")})
    assert verdict.status == "ok"


def test_two_key_records_at_one_selector_are_an_error():
    verdict = dkim.verdict("example.com", ["s"], {"s": found(f"p={RSA[2048]}", "p=")})
    assert verdict.status == "error" and "2 DKIM records" in verdict.details


def test_check_asks_every_selector_on_the_real_server(dns_server, dns_config):
    long_key = f"v=DKIM1; k=rsa; p={RSA[2048]}"
    strings = " ".join(f'"{long_key[i:i + 200]}"' for i in range(0, len(long_key), 200))
    dns_server.zone("example.com", f"google._domainkey IN TXT {strings}\n"
                    f's1._domainkey IN TXT "v=DKIM1; p={RSA[1024]}"')
    verdict = dkim.check(Lookup(dns_config), "example.com", ["s1", "google", "missing", "S1"])
    assert verdict.status == "ok"
    assert [(k["selector"], k["bits"]) for k in verdict.facts["keys"]] == [
        ("s1", 1024), ("google", 2048)]
    # Each selector once (S1 is s1). The selectors are asked at once, so the missing one's
    # NXDOMAIN may come before any answer and make the resolver check itself once (the
    # root's NS, dnscheck/resolver.py): that depends on the threads' timing.
    assert len(dns_server.asked(rdtype="TXT")) == 3
    assert len(dns_server.asked()) - 3 == len(dns_server.asked(".", "NS")) <= 1


def test_check_with_a_silent_nameserver_is_unknown_within_one_query_lifetime(dns_server,
                                                                           dns_config):
    import time
    dns_server.fault("example.com", "silent")
    started = time.monotonic()
    verdict = dkim.check(Lookup(dns_config), "example.com", [f"s{n}" for n in range(12)])
    assert verdict.status == "unknown"
    assert time.monotonic() - started < 2 * dns_config.dns_timeout + 1.0


def test_offline_check_is_unknown_and_sends_nothing(dns_server, dns_config):
    dns_server.zone("example.com", f's1._domainkey IN TXT "p={RSA[1024]}"')
    verdict = dkim.check(Lookup(dns_config.replace(offline=True)), "example.com", ["s1"])
    assert verdict.status == "unknown" and "offline" in verdict.details
    assert dns_server.asked() == []
