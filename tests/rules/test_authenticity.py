"""What report mail proves, and the rules using it: plain values, no DNS."""
from datetime import datetime, timedelta

import pytest

from rules.authenticity import (FAIL, FAILED, OTHER_SIGNER, PASS, UNCHECKED, UNKNOWN, UNSIGNED,
                                VERIFIED, Provenance, Signature, claimed_domain, required_domains,
                                speaks_for_reporter, unauthenticated, verdict)

NOW = datetime(2026, 11, 27, 12)
GOOGLE = "noreply-dmarc-support@google.com"


@pytest.mark.parametrize("signatures, expected", [
    ([], (UNSIGNED, "")),
    ([Signature("google.com", PASS)], (VERIFIED, "google.com")),
    ([Signature("relay.example", PASS), Signature("google.com", PASS)], (VERIFIED, "google.com")),
    ([Signature("relay.example", PASS), Signature("google.com", FAIL, "x")],
     (OTHER_SIGNER, "relay.example")),
    ([Signature("google.com", FAIL, "x"), Signature("google.com", UNKNOWN, "silent")],
     (UNCHECKED, "google.com")),
    ([Signature("google.com", FAIL, "body")], (FAILED, "google.com")),
])
def test_the_verdict_takes_the_best_signature_first(signatures, expected):
    proven = verdict(signatures, "google.com")
    assert (proven.authenticity, proven.signed_by) == expected


def test_a_subdomain_aligns_by_the_organizational_domain():
    proven = verdict([Signature("notification.microsoft.com", PASS)], "microsoft.com")
    assert proven.authenticity == VERIFIED


def test_speaking_for_the_reporter_needs_the_contact_addresss_organization():
    assert speaks_for_reporter(VERIFIED, "google.com", GOOGLE)
    assert speaks_for_reporter(VERIFIED, "notification.microsoft.com", "d@microsoft.com")
    assert not speaks_for_reporter(VERIFIED, "yahoo.com", "dmarchelp@yahooinc.com")
    assert not speaks_for_reporter(OTHER_SIGNER, "google.com", GOOGLE)


def mail(authenticity, signed_by="", from_domain="google.com", days_ago=0):
    return Provenance(authenticity, signed_by, "", from_domain, NOW - timedelta(days=days_ago))


@pytest.mark.parametrize("provenance, refused", [
    (mail(UNSIGNED), True),
    (mail(FAILED, "google.com"), True),
    (mail(OTHER_SIGNER, "relay.example"), True),
    (mail(VERIFIED, "google.com"), False),
    (mail(UNCHECKED, "google.com"), False),                 # never refused
    (mail(UNSIGNED, days_ago=8), False),                    # an archive
    (Provenance(UNSIGNED, "", "", "google.com", None), True),   # no Date: the rule applies
])
def test_require_dkim_from(provenance, refused):
    reason = unauthenticated(("google.com",), provenance, GOOGLE, "google.com", NOW)
    assert (reason is not None) == refused


def test_a_claim_by_any_of_from_contact_or_org_name():
    listed = required_domains(" Google.com, ,yahoo.com")
    assert listed == ("google.com", "yahoo.com")
    assert claimed_domain(listed, ("forger.example", "x@forger.example", "google.com")) == \
        "google.com"
    assert claimed_domain(listed, ("dmarc.yahoo.com", "", "Yahoo")) == "yahoo.com"
    assert claimed_domain(listed, ("receiver.example", "a@receiver.example", "Google")) is None
    forged = mail(VERIFIED, "forger.example", "forger.example")
    assert "signed by forger.example" in unauthenticated(listed, forged, "x@forger.example",
                                                         "google.com", NOW)
