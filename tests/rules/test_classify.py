"""Record classification: the first rule that holds wins (rules/verdicts.py)."""
import pytest

from rules.verdicts import Sender, classify_record, sender
from ingest.model import ParsedRecord


def record(dkim="fail", spf="fail", reasons=None, auth_dkim=None, auth_spf=None):
    return ParsedRecord(source_ip="192.0.2.1", count=1, disposition="none", dkim=dkim, spf=spf,
                        reasons=reasons, envelope_to="", envelope_from="", header_from="example.com",
                        auth_dkim=auth_dkim, auth_spf=auth_spf)


def sig(result, domain="example.com", selector="s1"):
    return {"Domain": domain, "Selector": selector, "Result": result, "HumanResult": ""}


def spf(result, domain="example.com"):
    return {"Domain": domain, "Scope": "mfrom", "Result": result, "HumanResult": ""}


def reason(kind):
    return [{"Type": kind, "Comment": ""}]


CASES = [
    # 1. authenticated: DMARC pass, whatever else the record says
    ("dkim pass", record(dkim="pass"), None, "unknown", "authenticated"),
    ("spf pass", record(spf="pass"), None, "unknown", "authenticated"),
    ("pass beats a bad reputation", record(dkim="pass", spf="pass"), None,
     Sender("unknown", "malicious"), "authenticated"),
    ("pass beats a forwarding reason", record(spf="pass", reasons=reason("mailing_list")), None,
     "unknown", "authenticated"),
    # 2. likely_forwarded
    ("mailing_list reason", record(reasons=reason("mailing_list")), None, "unknown",
     "likely_forwarded"),
    ("trusted_forwarder reason", record(reasons=reason("trusted_forwarder")), None, "unknown",
     "likely_forwarded"),
    ("local_policy reason", record(reasons=reason("local_policy")), None, "unknown",
     "likely_forwarded"),
    ("RFC 7489 forwarded reason", record(reasons=reason("forwarded")), None, "unknown",
     "likely_forwarded"),
    ("reason beats a bad reputation", record(reasons=reason("trusted_forwarder")), None,
     Sender("unknown", "suspicious"), "likely_forwarded"),
    ("aligned signature broken in transit", record(auth_dkim=[sig("fail")]),
     {"dkim": [True], "spf": None}, "unknown", "likely_forwarded"),
    ("other domain passes at a known forwarder",
     record(auth_dkim=[sig("pass", "list.example.org")], auth_spf=[spf("pass", "list.example.org")]),
     {"dkim": [False], "spf": [False]}, "forwarder", "likely_forwarded"),
    ("other SPF domain passes at a known forwarder", record(auth_spf=[spf("pass", "fwd.example.net")]),
     {"dkim": None, "spf": [False]}, "forwarder", "likely_forwarded"),
    # 3. suspicious
    ("no auth results at all", record(), None, "unknown", "suspicious"),
    ("empty alignment and results", record(auth_dkim=[], auth_spf=[]), {"dkim": [], "spf": []},
     "unknown", "suspicious"),
    ("only unaligned results", record(auth_dkim=[sig("pass", "evil.example")],
                                      auth_spf=[spf("pass", "evil.example")]),
     {"dkim": [False], "spf": [False]}, "unknown", "suspicious"),
    ("aligned SPF that failed", record(auth_spf=[spf("fail")]), {"dkim": None, "spf": [True]},
     "unknown", "suspicious"),
    ("dkim result none is no signature", record(auth_dkim=[sig("none")]),
     {"dkim": [True], "spf": None}, "unknown", "suspicious"),
    ("unknown reason type does not forward", record(reasons=reason("other")), None, "unknown",
     "suspicious"),
    ("policy_test_mode does not forward", record(reasons=reason("policy_test_mode")), None,
     "unknown", "suspicious"),
    ("recognised service with a malicious reputation", record(auth_dkim=[sig("permerror")]),
     {"dkim": [True], "spf": None}, Sender("service", "malicious"), "suspicious"),
    ("forwarder without another pass", record(), None, "forwarder", "suspicious"),
    ("missing alignment flags count as unaligned", record(auth_dkim=[sig("fail")]), {}, "unknown",
     "suspicious"),
    # 4. needs_review
    ("recognised service, nothing aligned", record(auth_spf=[spf("pass", "esp.example")]),
     {"dkim": None, "spf": [False]}, "service", "needs_review"),
    ("aligned signature with a key error", record(auth_dkim=[sig("permerror")]),
     {"dkim": [True], "spf": None}, "unknown", "needs_review"),
    ("aligned SPF pass the receiver did not credit", record(auth_spf=[spf("pass")]),
     {"dkim": None, "spf": [True]}, "unknown", "needs_review"),
    ("clean service with a temperror signature", record(auth_dkim=[sig("temperror")]),
     {"dkim": [True], "spf": None}, Sender("service", "clean"), "needs_review"),
]


@pytest.mark.parametrize("rec, alignment, sender, expected",
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_first_rule_that_holds_names_the_record(rec, alignment, sender, expected):
    if isinstance(sender, str):
        sender = Sender(kind=sender)
    assert classify_record(rec, alignment, sender) == expected


def test_sender_defaults_to_unknown():
    assert classify_record(record(), None) == "suspicious"
    assert classify_record(record(auth_spf=[spf("pass", "esp.example")]), {"spf": [False]}) == "suspicious"


def test_verdicts_ignore_case_of_reporter_values():
    rec = record(dkim="PASS")
    assert classify_record(rec, None) == "authenticated"
    assert classify_record(record(reasons=[{"Type": "Mailing_List", "Comment": None}]), None) == \
        "likely_forwarded"


@pytest.mark.parametrize("kind, reputation", [("cdn", "unknown"), ("service", "bad")])
def test_sender_rejects_values_outside_its_vocabulary(kind, reputation):
    with pytest.raises(ValueError):
        Sender(kind, reputation)


def test_an_aligned_helo_pass_is_not_an_spf_pass_for_rule_3():
    """DMARC counts the MAIL FROM identity only: a HELO pass leaves an unknown sender suspicious."""
    helo = {"Domain": "example.com", "Scope": "helo", "Result": "pass", "HumanResult": ""}
    assert classify_record(record(auth_spf=[helo]), {"spf": [True], "dkim": None}) == "suspicious"
    unstated = {"Domain": "example.com", "Result": "pass", "HumanResult": ""}
    assert classify_record(record(auth_spf=[unstated]), {"spf": [True], "dkim": None}) == "needs_review"
    assert classify_record(record(auth_spf=[helo, spf("pass")]),
                    {"spf": [True, True], "dkim": None}) == "needs_review"


@pytest.mark.parametrize("service_kind, kind", [
    (None, "unknown"), ("", "unknown"), ("forwarder", "forwarder"), ("esp", "service"),
    ("mailbox_provider", "service"), ("transactional", "service")])
def test_the_service_maps_kind_decides_the_senders_kind(service_kind, kind):
    assert sender(service_kind).kind == kind


@pytest.mark.parametrize("abuse_status, reputation", [
    ("clean", "clean"), ("malicious", "malicious"), (None, "unknown"), ("", "unknown"),
    ("listed?", "unknown")])
def test_a_stored_reputation_outside_the_vocabulary_reads_as_unknown(abuse_status, reputation):
    assert sender("esp", abuse_status).reputation == reputation
