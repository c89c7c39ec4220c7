"""Domain health from plain facts: score blend, DNS unknown until checked, items, empty state."""
from datetime import date, datetime, timedelta

import pytest

from rules.scores import WindowScores
from rules.snapshot_facts import (ActionItem, DomainFacts, OrgFacts, PublishedPolicy, SpanTally,
                                  TopSender)
from snapshotter import dns
from snapshotter.health import health_doc, health_score

TODAY = date(2026, 3, 31)
NOW = datetime(2026, 3, 31, 12, 0, 0)
ALL_OK = {k: {"status": "ok", "details": "Fine."} for k in dns.KINDS}


def window_scores(name="example.com", days=None, policy=PublishedPolicy("reject"), **fields):
    days = {TODAY: SpanTally(messages=100, compliant=100, spf_aligned_pass=100, dkim_aligned_pass=100, reports=1)} if days is None else days
    d = DomainFacts(name, days=days, policies=[(TODAY, policy)] if days else [],
                    last_report_day=max(days) if days else None, **fields)
    return WindowScores(OrgFacts(today=TODAY, domains={name: d}))


@pytest.mark.parametrize("compliance, dns_score, expected", [
    (90.0, 100.0, 92.0), (90.0, None, 90.0), (None, 100.0, None), (50.0, 0.0, 40.0),
])
def test_health_score_is_08_compliance_plus_02_dns_and_compliance_alone_while_dns_unknown(
        compliance, dns_score, expected):
    assert health_score(compliance, dns_score) == expected


@pytest.mark.parametrize("statuses, expected", [
    ({"dmarc": "ok", "spf": "ok", "dkim": "ok"}, 100.0),
    ({"dmarc": "ok", "spf": "warning", "dkim": "error"}, 55.0),     # 40 + 15 + 0
    ({"dmarc": "unknown", "spf": "ok", "dkim": "error"}, 50.0),     # 30 of 60
    ({"dmarc": "unknown", "spf": "unknown", "dkim": "unknown"}, None),
])
def test_dns_score_gives_dmarc_40_spf_30_dkim_30_and_leaves_unknown_out(statuses, expected):
    view = dns.dns_view("example.com", {k: {"status": s, "details": ""} for k, s in statuses.items()})
    assert dns.dns_score(view) == expected


def test_every_dns_kind_is_unknown_and_says_so_until_the_domain_is_checked():
    doc = health_doc(window_scores(), "example.com", NOW)
    assert set(doc["dns"]) == {"dmarc", "spf", "dkim", "mta_sts", "tls_rpt", "bimi", "dane"}
    for entry in doc["dns"].values():
        assert entry["status"] == "unknown" and "not been checked yet" in entry["details"]


def test_empty_state_never_claims_health_before_dns_is_checked():
    doc = health_doc(window_scores(), "example.com", NOW)
    assert doc["action_items"] == [] and doc["empty_state"]["healthy"] is False
    assert "not been checked" in doc["empty_state"]["message"]


def test_empty_state_is_healthy_when_dns_checks_out_and_the_score_is_secure():
    doc = health_doc(window_scores(dns=ALL_OK), "example.com", NOW)
    assert doc["empty_state"]["healthy"] is True and doc["overall_score"] == 100


def test_dns_gaps_become_action_items_most_urgent_first_and_empty_state_goes_away():
    checks = dict(ALL_OK, bimi={"status": "warning", "details": "No logo."},
                  dmarc={"status": "error", "details": "Publish a DMARC record."})
    event = ActionItem("new_sender", "medium", "New sender 192.0.2.9", "Check it.", "/sources/x")
    doc = health_doc(window_scores(dns=checks, items=[event]), "example.com", NOW)
    assert [i["type"] for i in doc["action_items"]] == ["dns_dmarc", "new_sender", "dns_bimi"]
    assert doc["action_items"][0]["severity"] == "high"
    assert doc["action_items"][1]["cta_url"] == "/sources/x"
    assert doc["alert_count"] == 3 and "empty_state" not in doc


def test_a_dns_event_the_gap_item_already_says_is_shown_once_as_the_dns_item():
    checks = dict(ALL_OK, spf={"status": "error", "details": "Publish SPF."},
                  tls_rpt={"status": "error", "details": "Fix rua=."})
    spf = ActionItem("dns_record_missing", "high", "SPF missing", "Publish SPF.", record_kind="spf")
    tls = ActionItem("dns_record_invalid", "high", "TLS-RPT invalid", "Fix rua=.", record_kind="tls_rpt")
    doc = health_doc(window_scores(dns=checks, items=[spf, tls]), "example.com", NOW)
    assert [i["type"] for i in doc["action_items"]] == ["dns_spf", "dns_record_invalid"]
    # DNS could not tell this time: the open event is the last word, so it is shown.
    doc = health_doc(window_scores(dns=dict(ALL_OK, spf={"status": "unknown", "details": "?"}),
                            items=[spf]), "example.com", NOW)
    assert [i["type"] for i in doc["action_items"]] == ["dns_record_missing"]


@pytest.mark.parametrize("type_, key, kind", [
    ("dns_record_missing", "dns_record_missing:example.com:spf", "spf"),
    ("dns_record_invalid", "dns_record_invalid:example.com:mta_sts", "mta_sts"),
    ("spf_lookup_limit", "spf_lookup_limit:example.com", "spf"),
    ("weak_dkim_key", "weak_dkim_key:example.com", "dkim"),
    ("new_sender", "new_sender:192.0.2.1", ""),
    ("dns_record_missing", "dns_record_missing:example.com:nonsense", ""),
])
def test_a_dns_events_record_kind_comes_from_its_type_or_key(type_, key, kind):
    assert dns.event_kind(type_, key) == kind


def test_empty_state_is_not_healthy_while_any_record_is_in_error():
    doc = health_doc(window_scores(dns=dict(ALL_OK, dane={"status": "error", "details": "Bad TLSA."})),
                     "example.com", NOW)
    assert doc["action_items"] == [] and doc["empty_state"]["healthy"] is False


def test_health_fields_follow_the_contract():
    senders = [TopSender("192.0.2.1", 90, 90, 10, "Example Mail", "example-mail", "example-mail"),
               TopSender("192.0.2.2", 10, 0, 10)]
    doc = health_doc(window_scores(senders=senders), "example.com", NOW)
    assert doc["last_report_date"] == TODAY and doc["total_messages"] == 100
    assert doc["compliance"] == {"rate": 100.0, "spf_pass": 100.0, "dkim_pass": 100.0, "policy": "reject"}
    assert doc["top_senders"][0] == {"ip": "192.0.2.1", "count": 90, "spf_result": "pass",
                                     "dkim_result": "fail", "service_name": "Example Mail",
                                     "service_icon": "example-mail", "service_slug": "example-mail"}
    assert doc["top_senders"][1] == {"ip": "192.0.2.2", "count": 10, "spf_result": "fail",
                                     "dkim_result": "pass"}
    assert len(doc["trend_sparkline"]) == 30 and doc["trend_sparkline"][-1]["date"] == TODAY
    assert doc["computed_at"] == NOW and doc["grade"] == "A+"


def test_before_the_first_report_grade_is_na_and_policy_comes_from_dns_when_known():
    doc = health_doc(window_scores(days={}, dns={"dmarc": {"status": "ok", "details": "", "policy": "quarantine"}}),
                     "example.com", NOW)
    assert doc["grade"] == "N/A" and doc["overall_score"] == 0 and doc["last_report_date"] is None
    assert doc["compliance"]["policy"] == "quarantine"
    assert "No DMARC reports" in doc["verdict"] and doc["empty_state"]["healthy"] is False
    assert health_doc(window_scores(days={}), "example.com", NOW)["compliance"]["policy"] == "none"


def test_a_score_of_96_99_is_graded_a_and_shown_rounded_half_up_as_97():
    days = {TODAY - timedelta(days=1): SpanTally(messages=10000, compliant=9699, spf_aligned_pass=9699, dkim_aligned_pass=9699, reports=1)}
    doc = health_doc(window_scores(days=days, policy=PublishedPolicy("reject", 97)), "example.com", NOW)
    assert (doc["overall_score"], doc["grade"]) == (97, "A")


def test_the_verified_rate_is_the_share_of_messages_verified_reports_account_for():
    doc = health_doc(window_scores(verified_messages=25), "example.com", datetime(2024, 1, 1))
    assert doc["verified_rate"] == 25.0         # of the window's 100 messages
    assert health_doc(window_scores(days={}), "example.com", datetime(2024, 1, 1))["verified_rate"] is None


def test_facts_count_the_messages_of_verified_reports_in_the_window(database):
    from rules.authenticity import OTHER_SIGNER, VERIFIED, Provenance
    from snapshotter import facts
    from store.clock import utcnow
    from tests.factories import make_org, make_report
    org = make_org()
    today = utcnow().date()
    make_report(org, records=[{"count": 30}], report_id="v",
                provenance=Provenance(VERIFIED, "google.com"))
    make_report(org, records=[{"count": 50}], report_id="relay",
                provenance=Provenance(OTHER_SIGNER, "relay.example"))
    make_report(org, records=[{"count": 20}], report_id="file")
    found = facts.read_domain(org.id, "example.com", today)
    assert found.domains["example.com"].verified_messages == 30
    doc = health_doc(WindowScores(found), "example.com", utcnow())
    assert (doc["total_messages"], doc["verified_rate"]) == (100, 30.0)
