"""The overview from plain facts: org_health, cards worst first, action item counts, verdicts."""
from datetime import date

from rules.scores import WindowScores
from rules.snapshot_facts import ActionItem, DomainFacts, OrgFacts, PublishedPolicy, SpanTally
from snapshotter.overview import overview_doc
from snapshotter.verdicts import domain_verdict, org_verdict

TODAY = date(2026, 3, 31)


def domain(name, tally=None, policy=PublishedPolicy("reject"), **fields):
    days = {TODAY: tally} if tally else {}
    return DomainFacts(name, days=days, policies=[(TODAY, policy)] if tally else [],
                       last_report_day=TODAY if tally else None, **fields)


def overview(*domains, **fields):
    return overview_doc(WindowScores(OrgFacts(today=TODAY, domains={d.name: d for d in domains}, **fields)))


def test_an_organization_without_reports_has_no_data_and_says_how_to_start():
    doc = overview(domain("a.example"), report_address="dmarc@reports.example.net")
    health = doc["org_health"]
    assert health["has_data"] is False and health["health_state"] == "nodata"
    assert health["grade"] == "N/A" and health["overall_score"] == 0
    assert "rua=mailto:dmarc@reports.example.net" in health["verdict"]
    assert doc["action_items_summary"] == {"total_pending": 0, "high": 0, "medium": 0, "low": 0}


def test_an_archive_older_than_the_window_has_no_data_in_it_but_says_its_latest_day():
    old = date(2013, 6, 25)
    archive = DomainFacts("a.example", days={old: SpanTally(10, 10, 10, 10)},
                          policies=[(old, PublishedPolicy("reject"))], last_report_day=old)
    health = overview(archive)["org_health"]
    assert health["health_state"] == "nodata" and health["grade"] == "N/A"
    assert health["has_data"] is True and health["latest_data_date"] == old
    assert overview(domain("b.example"))["org_health"]["latest_data_date"] is None


def test_cards_come_worst_score_first_and_domains_without_reports_last():
    doc = overview(domain("good.example", SpanTally(messages=10, compliant=10, spf_aligned_pass=10, dkim_aligned_pass=10)),
                   domain("quiet.example"),
                   domain("bad.example", SpanTally(messages=10, compliant=2, spf_aligned_pass=2, dkim_aligned_pass=2), PublishedPolicy("none")))
    assert [c["domain"] for c in doc["domain_cards"]] == ["bad.example", "good.example", "quiet.example"]
    assert doc["org_health"]["total_domains"] == 3      # as many as the cards
    assert doc["org_health"]["domains_needing_attention"] == 1
    assert "bad.example" in doc["org_health"]["verdict"]


def test_card_fields_policy_inheritance_forwarded_and_top_issue():
    items = [ActionItem("new_sender", "low", "New sender", "Look."),
             ActionItem("dns_dmarc", "high", "DMARC record missing", "Publish one.")]
    doc = overview(domain("a.example", SpanTally(messages=10, compliant=5, spf_aligned_pass=5, dkim_aligned_pass=5, forwarded=3), PublishedPolicy("bogus"),
                          inherited_from="example.org", items=items),
                   org_items=[ActionItem("quota_near_cap", "medium", "Quota", "Slow down.")],
                   unique_ips=7)
    card = doc["domain_cards"][0]
    assert card["policy"] == "" and card["inherited"] is True and card["inherited_from"] == "example.org"
    assert card["forwarded_messages"] == 3 and card["action_count"] == 2
    assert (card["top_issue"], card["top_issue_severity"]) == ("DMARC record missing", "high")
    assert doc["action_items_summary"] == {"total_pending": 3, "high": 1, "medium": 1, "low": 1}
    assert doc["org_health"]["unique_source_ips"] == 7 and doc["org_health"]["forwarded_messages"] == 3


def test_a_card_before_any_report_shows_the_policy_dns_publishes_and_its_dns_gaps():
    dns = {"dmarc": {"status": "warning", "details": "p=none only monitors.", "policy": "none"},
           "spf": {"status": "error", "details": "Publish SPF."}}
    doc = overview(domain("new.example", dns=dns), domain("quiet.example"),
                   domain("strict.example", dns={"dmarc": {"status": "ok", "details": "",
                                                           "policy": "reject"}}))
    cards = {c["domain"]: c for c in doc["domain_cards"]}
    assert [cards[n]["policy"] for n in ("new.example", "quiet.example", "strict.example")] == [
        "none", "none", "reject"]
    assert (cards["new.example"]["top_issue_severity"], cards["new.example"]["action_count"]) == (
        "high", 2)
    assert doc["action_items_summary"]["high"] == 1
    assert doc["org_health"]["domains_needing_attention"] == 1


def test_verdicts_say_what_to_do_next():
    window_scores = WindowScores(OrgFacts(today=TODAY, domains={d.name: d for d in [
        domain("none.example", SpanTally(messages=100, compliant=99, spf_aligned_pass=99, dkim_aligned_pass=99), PublishedPolicy("none")),
        domain("test.example", SpanTally(messages=100, compliant=99, spf_aligned_pass=99, dkim_aligned_pass=99), PublishedPolicy("reject", testing="y")),
        domain("pct.example", SpanTally(messages=100, compliant=99, spf_aligned_pass=99, dkim_aligned_pass=99), PublishedPolicy("reject", 50)),
        domain("q.example", SpanTally(messages=100, compliant=99, spf_aligned_pass=99, dkim_aligned_pass=99), PublishedPolicy("quarantine")),
        domain("spf.example", SpanTally(messages=100, compliant=99, spf_aligned_pass=50, dkim_aligned_pass=99), PublishedPolicy("reject")),
        domain("ok.example", SpanTally(messages=100, compliant=99, spf_aligned_pass=99, dkim_aligned_pass=99), PublishedPolicy("reject")),
        domain("low.example", SpanTally(messages=100, compliant=50, spf_aligned_pass=50, dkim_aligned_pass=50), PublishedPolicy("reject"))]}))
    said = {n: domain_verdict(n, window_scores.domain(n)) for n in window_scores.facts.domains}
    assert "Move to p=quarantine" in said["none.example"]
    assert "Remove t=y" in said["test.example"]
    assert "Raise pct to 100" in said["pct.example"]
    assert "Move to p=reject" in said["q.example"]
    assert "aligned SPF pass" in said["spf.example"]
    assert "well protected" in said["ok.example"]
    assert "Only 50%" in said["low.example"]
    assert "All 7 domains" not in org_verdict(window_scores.org(), 7, 1, "low.example")
