"""Record and source verdicts with their evidence: every rule, on plain values."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.verdicts import (AUTHORIZED, FORWARDER, UNAUTHORIZED, UNKNOWN, DomainResults,
                              Sender, classify_record, classify_source, explain_record, sender)

SERVICE = Sender("service", "clean", "SendGrid (Twilio)", True)
FORWARDING = Sender("forwarder", "clean", "Google Groups", True)
STRANGER = Sender("unknown", "unknown", None, True)


def record(dkim="fail", spf="fail", reasons=None, auth_dkim=None, auth_spf=None):
    return SimpleNamespace(dkim=dkim, spf=spf, reasons=reasons, auth_dkim=auth_dkim,
                           auth_spf=auth_spf)


def dkim(result, domain="example.com"):
    return {"Domain": domain, "Selector": "s1", "Result": result}


def spf(result, domain="example.com", scope="mfrom"):
    return {"Domain": domain, "Scope": scope, "Result": result}


@pytest.mark.parametrize("rec, alignment, source, rule, because", [
    (record(dkim="pass"), {}, STRANGER, "authenticated", ["dmarc_dkim_pass"]),
    (record(dkim="pass", spf="pass"), {}, STRANGER, "authenticated",
     ["dmarc_dkim_pass", "dmarc_spf_pass"]),
    (record(reasons=[{"Type": "mailing_list"}]), {}, STRANGER, "likely_forwarded",
     ["reason_mailing_list"]),
    (record(auth_dkim=[dkim("fail")]), {"dkim": [True]}, STRANGER, "likely_forwarded",
     ["dkim_signature_of_from_domain_failed"]),
    (record(auth_dkim=[dkim("pass", "list.example")]), {"dkim": [False]}, FORWARDING,
     "likely_forwarded", ["other_domain_passed_from_known_forwarder"]),
    (record(auth_spf=[spf("pass")]), {"spf": [True]}, Sender("service", "malicious"),
     "suspicious", ["reputation_malicious"]),
    (record(auth_spf=[spf("fail")]), {"spf": [True]}, STRANGER, "suspicious",
     ["no_aligned_dkim_signature", "no_aligned_spf_pass", "not_a_known_sending_service"]),
    (record(auth_dkim=[dkim("pass", "sendgrid.info")]), {"dkim": [False]}, SERVICE,
     "needs_review", ["dmarc_failed", "known_sending_service"]),
    (record(auth_dkim=[dkim("temperror")]), {"dkim": [True]}, STRANGER, "needs_review",
     ["dmarc_failed", "aligned_dkim_signature_not_verified"]),
])
def test_record_rules_and_their_evidence(rec, alignment, source, rule, because):
    evidence = explain_record(rec, alignment, source)
    assert evidence["rule"] == rule and evidence["because"] == because
    assert evidence["sentence"].endswith(".") and len(evidence["sentence"]) > 20
    assert classify_record(rec, alignment, source) == rule


def test_the_sentence_names_the_service():
    rec = record(auth_dkim=[dkim("pass", "sendgrid.info")])
    assert "SendGrid (Twilio)" in explain_record(rec, {"dkim": [False]}, SERVICE)["sentence"]


def test_a_helo_pass_is_not_an_spf_pass_for_dmarc():
    rec = record(auth_spf=[spf("pass", scope="helo")])
    assert classify_record(rec, {"spf": [True]}, STRANGER) == "suspicious"
    assert classify_record(record(auth_spf=[spf("pass", scope="")]), {"spf": [True]},
                           STRANGER) == "needs_review"        # no scope: mfrom (RFC 7489)


results = st.sampled_from(["pass", "fail", "none", "temperror", "softfail", "", None])
entries = st.lists(st.fixed_dictionaries({"Domain": st.sampled_from(["example.com", "x.net"]),
                                          "Result": results}), max_size=3)


@settings(max_examples=300, deadline=None)
@given(policy_dkim=st.sampled_from(["pass", "fail", ""]),
       policy_spf=st.sampled_from(["pass", "fail"]),
       reasons=st.sampled_from([None, [{"Type": "mailing_list"}], [{"Type": "other"}]]),
       auth_dkim=entries, auth_spf=entries, flags=st.lists(st.booleans(), max_size=3),
       kind=st.sampled_from(["unknown", "service", "forwarder"]),
       reputation=st.sampled_from(["unknown", "clean", "suspicious", "malicious"]))
def test_every_record_verdict_is_explained_in_words(
        policy_dkim, policy_spf, reasons, auth_dkim, auth_spf, flags, kind, reputation):
    rec = record(policy_dkim, policy_spf, reasons, auth_dkim, auth_spf)
    alignment = {"dkim": flags, "spf": list(reversed(flags))}
    ours = explain_record(rec, alignment, Sender(kind, reputation))["rule"]   # every fact has words
    assert ours == classify_record(rec, alignment, Sender(kind, reputation))


def test_sender_from_enrichment_values():
    assert sender("forwarder").kind == "forwarder"
    assert sender("esp", "clean", "Mailchimp", "pass", "mcsv.net") == Sender(
        "service", "clean", "Mailchimp", True, "mcsv.net")
    assert sender(None, fcrdns="unknown") == Sender()
    with pytest.raises(ValueError, match="sender kind"):
        Sender("isp")


def tally(domain="example.com", messages=10, **counts):
    return DomainResults(domain, messages, **counts)


@pytest.mark.parametrize("results, source, classification, because", [
    ([tally(spf_aligned_pass=1, dmarc_pass=1)], STRANGER, AUTHORIZED, ("aligned_spf_pass",)),
    ([tally(spf_aligned_pass=1, dmarc_pass=1)], Sender("unknown", "malicious", checked=True), AUTHORIZED,
     ("aligned_spf_pass",)),
    ([tally(dkim_aligned_pass=5, dmarc_pass=5)], SERVICE, AUTHORIZED,
     ("aligned_dkim_pass", "known_sending_service")),
    ([tally("mail.example.com", dkim_aligned_pass=6, dmarc_pass=6)],
     Sender("unknown", "clean", None, True, "example.com"), AUTHORIZED,
     ("aligned_dkim_pass", "ptr_under_domain")),
    ([tally(dkim_aligned_pass=6, dmarc_pass=6)], FORWARDING, FORWARDER, ("known_forwarder",)),
    ([tally(dkim_aligned_pass=6, dmarc_pass=6)], STRANGER, UNKNOWN, ("not_decided",)),
    ([tally(forwarded=5)], STRANGER, FORWARDER, ("mostly_forwarded",)),
    ([tally(dkim_aligned_pass=4, dmarc_pass=4)], Sender("unknown", "suspicious", checked=True),
     UNAUTHORIZED, ("reputation_suspicious",)),
    ([tally(), tally("other.example", 3)], STRANGER, UNAUTHORIZED,
     ("dmarc_failed_everywhere", "not_a_known_sending_service")),
    ([tally()], Sender(), UNKNOWN, ("not_decided",)),          # not enriched: nothing invented
    ([tally()], SERVICE, UNKNOWN, ("known_sending_service", "not_aligned")),
    ([tally(dkim_aligned_pass=4, dmarc_pass=4)], SERVICE, UNKNOWN, ("known_sending_service",
                                                            "not_aligned")),
    ([], STRANGER, UNKNOWN, ("not_decided",)),
])
def test_source_rules(results, source, classification, because):
    verdict = classify_source(results, source)
    assert (verdict.classification, verdict.because) == (classification, because)
    assert verdict.authorized is (classification == AUTHORIZED)
    assert verdict.sentence.endswith(".")


def test_an_spf_authorized_source_is_explained_by_the_reports_not_by_dns():
    """The DNS check alone says what the SPF record holds now; the sentence says what the
    receivers saw, which a record removed since (or never fetched) cannot contradict."""
    verdict = classify_source([tally("bounce.example.com", spf_aligned_pass=1, dmarc_pass=1)], STRANGER)
    assert verdict.sentence == ("Receivers' reports show this source passing SPF aligned with "
                                "bounce.example.com.")
