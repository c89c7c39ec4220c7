"""Health and overview answered by the API after a live DNS check (real DNS server, real store)."""
from __future__ import annotations

import pytest

from dnscheck import jobs as dns_jobs
from snapshotter import refreshes
from tests.dnscheck.conftest import _dns_server_session, dns_config, dns_server  # noqa: F401
from tests.dnscheck.zones import REPORT_ADDRESS, serve
from store.models import Event
from tests.factories import make_domain
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.webapp.conftest import app, client, clock, key, org  # noqa: F401
from tests.webapp.helpers import get


@pytest.fixture
def checking(dns_config, clock):  # noqa: F811
    clock.now = NOW
    return dns_config.replace(report_address=REPORT_ADDRESS, dkim_selectors="s1")


def check_and_refresh(config, org):  # noqa: F811
    dns_jobs.check_stored(config, now=NOW)
    refreshes.refresh_dirty(NOW, config)


def test_after_a_clean_check_dns_enters_the_score_and_only_optional_records_are_left_to_do(
        client, org, key, dns_server, checking):  # noqa: F811
    report_on(org, "good.example", TODAY, [{"count": 10}], p="reject")   # monitored: auto
    serve(dns_server, "good.example")
    check_and_refresh(checking, org)
    body = get(client, "/domains/good.example/health", key).get_json()
    assert {body["dns"][k]["status"] for k in ("dmarc", "spf", "dkim")} == {"ok"}
    assert body["overall_score"] == 100
    # No MTA-STS or BIMI record: what they would bring is low on the list, and nothing else.
    assert [(i["type"], i["severity"]) for i in body["action_items"]] == [
        ("dns_mta_sts", "low"), ("dns_bimi", "low")]
    # Absent is "missing", the contract's error, whatever the kind; yet no event is pushed for
    # a record that is optional, and the DNS score (dmarc, spf, dkim) is whole.
    assert {body["dns"][k]["status"] for k in ("mta_sts", "bimi")} == {"error"}
    assert not Event.select().where(Event.type == "dns_record_missing").exists()
    domains = get(client, "/domains", key).get_json()["domains"]
    assert (domains[0]["dmarc_state"], domains[0]["verified"]) == ("verified", True)


def test_gaps_become_dns_items_most_urgent_first_and_lower_the_score(
        client, org, key, dns_server, checking):  # noqa: F811
    report_on(org, "good.example", TODAY, [{"count": 10}], p="reject")   # monitored: auto
    serve(dns_server, "good.example", spf=None,
          dmarc=f"v=DMARC1; p=quarantine; pct=50; rua=mailto:{REPORT_ADDRESS}")
    check_and_refresh(checking, org)
    body = get(client, "/domains/good.example/health", key).get_json()
    assert [i["type"] for i in body["action_items"]][:2] == ["dns_spf", "dns_dmarc"]
    assert body["action_items"][0]["severity"] == "high" and "empty_state" not in body
    # 0.2 x the DNS score: dmarc half (a warning), spf none (an error), dkim full.
    assert body["overall_score"] < 100
    card = get(client, "/dashboard/overview", key).get_json()["domain_cards"][0]
    assert card["top_issue_severity"] == "high"
    assert card["action_count"] == len(body["action_items"])


def test_before_any_report_the_policy_comes_from_dns(
        client, org, key, dns_server, checking):  # noqa: F811
    make_domain(org, name="good.example")
    serve(dns_server, "good.example",
          dmarc=f"v=DMARC1; p=quarantine; rua=mailto:{REPORT_ADDRESS}")
    check_and_refresh(checking, org)
    body = get(client, "/domains/good.example/health", key).get_json()
    assert body["compliance"]["policy"] == "quarantine" and body["grade"] == "N/A"
    card = get(client, "/dashboard/overview", key).get_json()["domain_cards"][0]
    assert card["policy"] == "quarantine"


def test_a_card_says_its_policy_is_inherited_even_when_the_parent_reports_elsewhere(
        client, org, key, dns_server, checking):  # noqa: F811
    make_domain(org, name="sub.good.example")
    serve(dns_server, "good.example", dmarc="v=DMARC1; p=reject; rua=mailto:d@good.example",
          extra="sub IN A 192.0.2.9\n")
    check_and_refresh(checking, org)
    card = get(client, "/dashboard/overview", key).get_json()["domain_cards"][0]
    assert (card["inherited"], card["inherited_from"], card["policy"]) == (
        True, "good.example", "reject")
    [row] = get(client, "/domains", key).get_json()["domains"]
    assert (row["dmarc_state"], row["verified_source"]) == ("published_not_ours", "")
