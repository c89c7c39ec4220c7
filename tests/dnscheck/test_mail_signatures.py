"""Report mail's DKIM signatures: signed by the tests, keys published by the tests' DNS server."""
from __future__ import annotations

import re
import time

import pytest

from dnscheck.mail_signatures import ASK_AGAIN_SECONDS, MAX_SIGNATURES, MailSignatures
from rules.authenticity import FAILED, OTHER_SIGNER, UNCHECKED, UNSIGNED, VERIFIED
from tests.signed_mail import ed25519_key, report_message, rsa_key, signed

GOOGLE = "noreply-dmarc-support@google.com"
RSA_1024 = rsa_key("google.com", "s1024", 1024)
RSA_2048 = rsa_key("google.com", "s2048", 2048)
ED25519 = ed25519_key("google.com", "ed")
RELAY = rsa_key("relay.example", "r1", 1024)


@pytest.fixture
def published(dns_server):
    """The keys above published by the test DNS server."""
    dns_server.zone("google.com", RSA_1024.zone_line() + RSA_2048.zone_line()
                    + ED25519.zone_line())
    dns_server.zone("relay.example", RELAY.zone_line())
    return dns_server


@pytest.fixture
def check(dns_config, published):
    return MailSignatures(dns_config)


@pytest.mark.parametrize("key", [RSA_1024, RSA_2048, ED25519], ids=["rsa1024", "rsa2048",
                                                                     "ed25519"])
@pytest.mark.parametrize("canonicalize", [(b"relaxed", b"relaxed"), (b"simple", b"simple"),
                                          (b"relaxed", b"simple")])
def test_a_signature_by_the_from_domain_is_verified(check, key, canonicalize):
    proven = check(signed(report_message(GOOGLE), key, canonicalize=canonicalize))
    assert (proven.authenticity, proven.signed_by, proven.reason) == (VERIFIED, "google.com", "")
    assert proven.from_domain == "google.com" and proven.sent_at is not None


def test_a_subdomain_signature_aligns_with_the_organizational_domain(dns_config, dns_server):
    key = rsa_key("notification.microsoft.com", "s1", 1024)
    dns_server.zone("notification.microsoft.com", key.zone_line())
    proven = MailSignatures(dns_config)(signed(report_message("dmarcreport@microsoft.com"), key))
    assert (proven.authenticity, proven.signed_by) == (VERIFIED, "notification.microsoft.com")


def test_unsigned_mail_is_unsigned(check):
    assert check(report_message(GOOGLE)).authenticity == UNSIGNED


def test_a_relays_signature_is_other_signer(check):
    proven = check(signed(report_message(GOOGLE), RELAY))
    assert (proven.authenticity, proven.signed_by) == (OTHER_SIGNER, "relay.example")


def test_one_valid_aligned_signature_among_several_verifies(check):
    message = signed(signed(signed(report_message(GOOGLE), RSA_1024), RELAY), ED25519)
    assert check(message).authenticity == VERIFIED
    broken = signed(report_message(GOOGLE), RELAY).replace(b"Subject: Report",
                                                           b"Subject: Forged")
    assert check(signed(broken, RSA_2048)).authenticity == VERIFIED     # RELAY's fails


def test_a_body_changed_after_signing_fails(check):
    message = signed(report_message(GOOGLE, attachment=b"<feedback>1</feedback>"), RSA_2048)
    forged = message.replace(b"PGZlZWRiYWNrPjE8L2ZlZWRiYWNrPg==",
                             b"PGZlZWRiYWNrPjI8L2ZlZWRiYWNrPg==")
    assert forged != message
    proven = check(forged)
    assert (proven.authenticity, proven.signed_by) == (FAILED, "google.com")
    assert "body was changed" in proven.reason


def test_a_signed_header_changed_fails(check):
    message = signed(report_message(GOOGLE), ED25519).replace(b"To: dmarc@example.com",
                                                              b"To: dmarc@example.net")
    proven = check(message)
    assert proven.authenticity == FAILED
    assert "does not match" in proven.reason


def test_l_that_leaves_part_of_the_body_unsigned_fails(check):
    whole = signed(report_message(GOOGLE), RSA_1024, length=True)
    assert check(whole).authenticity == VERIFIED
    appended = whole.replace(b"--b1--\r\n", b"--b1\r\nContent-Type: application/xml\r\n\r\n"
                                            b"<feedback>forged</feedback>\r\n--b1--\r\n")
    proven = check(appended)
    assert proven.authenticity == FAILED and "l= signs" in proven.reason


def test_an_expired_signature_is_unchecked_not_failed(check):
    proven = check(signed(report_message(GOOGLE), RSA_2048, expires=int(time.time()) - 86400))
    assert (proven.authenticity, proven.reason) == (UNCHECKED, "the signature expired (x=)")


def test_a_revoked_key_is_unchecked_not_failed(dns_config, dns_server):
    dns_server.zone("google.com", "s1024._domainkey IN TXT \"v=DKIM1; k=rsa; p=\"\n")
    proven = MailSignatures(dns_config)(signed(report_message(GOOGLE), RSA_1024))
    assert proven.authenticity == UNCHECKED
    assert proven.reason == "the key at s1024._domainkey.google.com is revoked (empty p=)"


def test_a_key_no_longer_published_is_unchecked(dns_config, dns_server):
    dns_server.zone("google.com", "")
    proven = MailSignatures(dns_config)(signed(report_message(GOOGLE), RSA_1024))
    assert proven.authenticity == UNCHECKED and "no longer published" in proven.reason


def test_dns_that_does_not_answer_leaves_the_mail_unchecked_within_its_deadline(
        dns_config, published):
    published.fault("google.com", "silent")
    check = MailSignatures(dns_config)
    started = time.monotonic()
    proven = check(signed(signed(report_message(GOOGLE), RSA_1024), RSA_2048))
    elapsed = time.monotonic() - started
    assert proven.authenticity == UNCHECKED and "no answer" in proven.reason
    assert elapsed < 4 * dns_config.dns_timeout + 1      # one deadline for the message


def test_offline_nothing_is_asked_and_the_mail_is_unchecked(dns_config, published):
    proven = MailSignatures(dns_config.replace(offline=True))(
        signed(report_message(GOOGLE), RSA_2048))
    assert (proven.authenticity, proven.reason) == (UNCHECKED, "offline (RUA_OFFLINE=1)")
    assert proven.signed_by == "google.com"
    assert published.asked() == []


def test_each_key_is_asked_once_per_run(check, published):
    for number in range(20):
        message = signed(report_message(GOOGLE, subject=f"Report {number}"), RSA_2048)
        assert check(message).authenticity == VERIFIED
    assert len(published.asked("s2048._domainkey.google.com", "TXT")) == 1


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_key_dns_gave_no_answer_for_is_asked_again_a_minute_later(dns_config, published):
    clock = Clock()
    check = MailSignatures(dns_config, clock=clock)
    published.fault("google.com", "servfail")
    assert check(signed(report_message(GOOGLE), RSA_2048)).authenticity == UNCHECKED
    published.reset()               # DNS answers again
    published.zone("google.com", RSA_2048.zone_line())
    clock.now += ASK_AGAIN_SECONDS - 1
    assert check(signed(report_message(GOOGLE), RSA_2048)).authenticity == UNCHECKED
    clock.now += 1
    assert check(signed(report_message(GOOGLE), RSA_2048)).authenticity == VERIFIED
    clock.now += 3600
    assert check(signed(report_message(GOOGLE), RSA_2048)).authenticity == VERIFIED
    assert len(published.asked("s2048._domainkey.google.com", "TXT")) == 1


def test_a_key_no_longer_published_is_not_asked_again_in_the_run(dns_config, dns_server):
    clock = Clock()
    check = MailSignatures(dns_config, clock=clock)
    dns_server.zone("google.com", "")
    assert check(signed(report_message(GOOGLE), RSA_2048)).authenticity == UNCHECKED
    dns_server.zone("google.com", RSA_2048.zone_line())
    clock.now += 3600
    assert check(signed(report_message(GOOGLE), RSA_2048)).authenticity == UNCHECKED
    assert len(dns_server.asked("s2048._domainkey.google.com", "TXT")) == 1


def test_at_most_a_few_signatures_are_tried(check, published):
    message = report_message(GOOGLE)
    for number in range(MAX_SIGNATURES + 3):
        message = signed(message, rsa_key("relay.example", f"x{number}", 1024))
    assert check(message).authenticity == UNCHECKED      # keys not published: not checked
    keys = [name for name, _, _ in published.asked()
            if name.endswith("._domainkey.relay.example.")]
    assert len(keys) == MAX_SIGNATURES          # (beside the one question about the root)


@pytest.mark.parametrize("signature", [
    b"DKIM-Signature: v=1; a=rsa-sha256; d=google.com; s=; h=from; bh=; b=\r\n",
    b"DKIM-Signature: \xff\xfe=;;;\r\n",
    b"DKIM-Signature: v=1\r\n",
])
def test_a_malformed_signature_fails_with_a_one_line_reason(check, signature):
    proven = check(signature + report_message(GOOGLE))
    assert proven.authenticity == FAILED
    assert proven.reason and "\n" not in proven.reason


def test_a_signature_that_leaves_from_unsigned_fails(check):
    # dkimpy refuses to make one: its h= rewritten (the check comes before the cryptography).
    message = signed(report_message(GOOGLE), RSA_2048)
    unsigned_from = re.sub(rb"h=[^;]*;", b"h=subject : date;", message, count=1)
    assert unsigned_from != message
    proven = check(unsigned_from)
    assert (proven.authenticity, proven.reason) == (FAILED, "the signature does not cover From (h=)")


def test_blank_lines_before_the_headers_are_skipped(check):
    assert check(b"   \r\n" + signed(report_message(GOOGLE), RSA_2048)).authenticity == VERIFIED
