"""Verification states from plain verdicts: every one of the seven values, and what follows."""
from __future__ import annotations

import pytest

from dnscheck import dmarc, states
from dnscheck.verdict import Verdict

OURS = "dmarc@rua.example"


def record(text: str, at: str = "example.com") -> Verdict:
    return dmarc.verdict("example.com", at, [text])


def tls(status: str = "ok", rua=("mailto:dmarc@rua.example",), records: int = 1) -> Verdict:
    return Verdict(status, "TLS-RPT.", facts={"rua": list(rua), "records": records})


UNKNOWN = Verdict("unknown", "DNS could not tell.")


@pytest.mark.parametrize("dmarc_verdict, expected", [
    (None, "pending"),
    (record(f"v=DMARC1; p=reject; rua=mailto:{OURS}"), "verified"),
    (record(f"v=DMARC1; p=reject; rua=mailto:{OURS.upper()}!10m,mailto:x@example.com"),
     "verified"),
    (record(f"v=DMARC1; p=reject; rua=mailto:{OURS}", at="parent.example"), "verified_inherited"),
    (dmarc.verdict("example.com", None, []), "not_published"),
    (record("v=DMARC1; p=reject; rua=mailto:someone@elsewhere.example"), "published_not_ours"),
    (record("v=DMARC1; p=reject"), "published_not_ours"),
    (record(f"v=DMARC1; p=rejct; rua=mailto:{OURS}"), "published_not_ours"),
    (dmarc.verdict("example.com", "example.com", ["v=DMARC1; p=none", "v=DMARC1; p=reject"]),
     "multiple_records"),
    (UNKNOWN, "unconfirmed"),
])
def test_dmarc_state(dmarc_verdict, expected):
    assert states.verification(dmarc_verdict, None, OURS)["dmarc_state"] == expected


def test_every_state_value_is_reachable():
    reached = {states.verification(v, None, OURS)["dmarc_state"] for v in (
        None, UNKNOWN, dmarc.verdict("example.com", None, []),
        record(f"v=DMARC1; p=reject; rua=mailto:{OURS}"),
        record(f"v=DMARC1; p=reject; rua=mailto:{OURS}", at="parent.example"),
        record("v=DMARC1; p=reject; rua=mailto:x@elsewhere.example"),
        dmarc.verdict("example.com", "example.com", ["v=DMARC1; p=none"] * 2))}
    assert reached == set(states.STATES)


def test_inherited_verification_names_the_parent():
    found = states.verification(record(f"v=DMARC1; p=reject; rua=mailto:{OURS}",
                                       at="parent.example"), None, OURS)
    assert (found["verified_source"], found["inherited_from"]) == ("inherited", "parent.example")
    own = states.verification(record(f"v=DMARC1; p=reject; rua=mailto:{OURS}"), None, OURS)
    assert (own["verified_source"], own["inherited_from"]) == ("self", "")
    other = states.verification(record("v=DMARC1; p=reject; rua=mailto:x@y.example",
                                       at="parent.example"), None, OURS)
    assert (other["verified_source"], other["inherited_from"]) == ("", "")


def test_forensic_state_and_enabled_follow_ruf():
    found = states.verification(record(f"v=DMARC1; p=reject; rua=mailto:{OURS}; "
                                       f"ruf=mailto:{OURS}"), None, OURS)
    assert (found["forensic_state"], found["forensic_enabled"]) == ("verified", True)
    found = states.verification(record(f"v=DMARC1; p=reject; rua=mailto:{OURS}; "
                                       "ruf=mailto:f@elsewhere.example"), None, OURS)
    assert (found["forensic_state"], found["forensic_enabled"]) == ("published_not_ours", True)
    found = states.verification(record(f"v=DMARC1; p=reject; rua=mailto:{OURS}"), None, OURS)
    assert (found["forensic_state"], found["forensic_enabled"]) == ("not_published", False)


@pytest.mark.parametrize("verdict, expected, enabled", [
    (None, "pending", False),
    (tls(), "verified", True),
    (tls(rua=("mailto:x@elsewhere.example",)), "published_not_ours", True),
    (tls(rua=("https://reports.example/tlsrpt",)), "published_not_ours", True),
    (tls("warning", rua=(), records=0), "not_published", False),
    (tls("error", rua=(), records=2), "multiple_records", False),
    (tls("error", rua=(), records=1), "published_not_ours", False),
    (UNKNOWN, "unconfirmed", False),
])
def test_tlsrpt_state_and_enabled(verdict, expected, enabled):
    found = states.verification(None, verdict, OURS)
    assert (found["tlsrpt_state"], found["tlsrpt_enabled"]) == (expected, enabled)


def test_without_a_report_address_nothing_is_verified_but_absence_is_still_known():
    found = states.verification(record(f"v=DMARC1; p=reject; rua=mailto:{OURS}"), tls(), "")
    assert (found["dmarc_state"], found["tlsrpt_state"]) == ("unconfirmed", "unconfirmed")
    assert found["verified_source"] == ""
    missing = states.verification(dmarc.verdict("example.com", None, []), None, "")
    assert missing["dmarc_state"] == "not_published"


def test_addresses_are_compared_in_one_form():
    assert states.addresses("mailto:DMARC@Rua.Example!10m, mailto:a%40b.example, https://x/y") \
        == {"dmarc@rua.example", "a@b.example"}
    assert states.addresses("mailto:dmarc@rua.example") == states.addresses("dmarc@rua.example")
