"""Compliance score formula, windows and the organization's weighting, from plain values."""
from datetime import date, timedelta

import pytest

from rules.scores import (Cumulative, WindowScores, compliance_doc, compliance_score,
                          policy_as_of, unknown_domain_compliance)
from rules.snapshot_facts import DomainFacts, OrgFacts, PublishedPolicy, SpanTally

TODAY = date(2026, 3, 31)


def day(n):
    return TODAY - timedelta(days=n)


@pytest.mark.parametrize("tally, strength, expected", [
    (SpanTally(messages=100, compliant=100, spf_aligned_pass=100, dkim_aligned_pass=100), 100, 100.0),
    (SpanTally(messages=100, compliant=100, spf_aligned_pass=100, dkim_aligned_pass=100), 0, 80.0),
    (SpanTally(messages=100, compliant=50, spf_aligned_pass=100, dkim_aligned_pass=0), 50, 50.0),          # 0.4*50 + 0.2*100 + 0 + 0.2*50
    (SpanTally(messages=3, compliant=1, spf_aligned_pass=2, dkim_aligned_pass=3), 25, 51.67),              # 13.33 + 13.33 + 20 + 5
    (SpanTally(messages=0, compliant=0, spf_aligned_pass=0, dkim_aligned_pass=0), 100, 20.0),              # zero messages: only the policy counts
    (SpanTally(messages=100, compliant=97, spf_aligned_pass=97, dkim_aligned_pass=97), 100, 97.6),
    (SpanTally(messages=10000, compliant=9699, spf_aligned_pass=9699, dkim_aligned_pass=9699), 97, 96.99),
    (SpanTally(messages=100, compliant=97, spf_aligned_pass=97, dkim_aligned_pass=97), 97, 97.0),
])
def test_compliance_score_weighs_compliance_04_and_spf_dkim_policy_02(tally, strength, expected):
    assert compliance_score(tally, strength) == expected


def test_cumulative_window_sums_only_days_inside_the_window():
    c = Cumulative({day(0): SpanTally(messages=1), day(5): SpanTally(messages=10), day(40): SpanTally(messages=100)})
    assert c.between(day(29), day(0)).messages == 11
    assert c.between(day(40), day(40)).messages == 100
    assert c.between(day(3), day(1)).messages == 0


def test_policy_as_of_takes_the_latest_report_on_or_before_the_day():
    policies = [(day(10), PublishedPolicy("none")), (day(3), PublishedPolicy("reject"))]
    assert policy_as_of(policies, day(11)) is None
    assert policy_as_of(policies, day(4)) == PublishedPolicy("none")
    assert policy_as_of(policies, day(3)) == PublishedPolicy("reject")


def facts(**domains):
    return OrgFacts(today=TODAY, domains={n: d for n, d in domains.items()})


def domain(name, days, policy=PublishedPolicy("reject")):
    return DomainFacts(name, days=days, policies=[(min(days), policy)] if days else [],
                       last_report_day=max(days) if days else None)


def test_organization_rates_are_message_weighted_and_policy_strength_a_plain_average():
    f = facts(**{"a.example": domain("a.example", {day(1): SpanTally(messages=900, compliant=900, spf_aligned_pass=900, dkim_aligned_pass=900)}),
                 "b.example": domain("b.example", {day(2): SpanTally(messages=100, compliant=0, spf_aligned_pass=0, dkim_aligned_pass=0)}, PublishedPolicy("none")),
                 "c.example": DomainFacts("c.example")})
    doc = compliance_doc(WindowScores(f))
    assert doc["compliance_rate"] == 90.0 and doc["spf_pass_rate"] == 90.0
    assert doc["policy_strength"] == 50.0     # (100 + 0) / 2: c.example has no reports
    assert doc["overall_score"] == 82.0       # 36 + 18 + 18 + 10
    assert doc["grade"] == "B-"
    assert [s["domain"] for s in doc["domain_scores"]] == ["a.example", "b.example", "c.example"]
    assert doc["domain_scores"][2]["grade"] == "N/A"


def test_reports_older_than_the_30_day_window_do_not_count_in_the_score():
    f = facts(**{"a.example": domain("a.example", {day(30): SpanTally(messages=50, compliant=0, spf_aligned_pass=0, dkim_aligned_pass=0, reports=1),
                                                   day(29): SpanTally(messages=10, compliant=10, spf_aligned_pass=10, dkim_aligned_pass=10, reports=2)})})
    doc = compliance_doc(WindowScores(f), "a.example")
    assert doc["total_messages"] == 10 and doc["total_reports"] == 2
    assert doc["compliance_rate"] == 100.0


def test_domain_with_reports_only_before_the_window_is_not_scored():
    f = facts(**{"a.example": domain("a.example", {day(45): SpanTally(messages=50, compliant=50, spf_aligned_pass=50, dkim_aligned_pass=50)})})
    doc = compliance_doc(WindowScores(f), "a.example")
    assert doc["overall_score"] == 0.0 and doc["total_messages"] == 0 and doc["grade"] == "N/A"
    assert WindowScores(f).domain("a.example").last_report == day(45)
    assert doc["latest_data_date"] == day(45)        # says where the history ends


def test_an_organization_whose_reports_are_all_old_says_its_latest_data_date():
    f = facts(**{"a.example": domain("a.example", {day(400): SpanTally(messages=5, compliant=5, spf_aligned_pass=5, dkim_aligned_pass=5)}),
                 "b.example": domain("b.example", {day(90): SpanTally(messages=5, compliant=5, spf_aligned_pass=5, dkim_aligned_pass=5)}),
                 "c.example": DomainFacts("c.example")})
    doc = compliance_doc(WindowScores(f))
    assert doc["grade"] == "N/A" and doc["latest_data_date"] == day(90)
    assert compliance_doc(WindowScores(facts(c=DomainFacts("c")))).get("latest_data_date", 0) is None
    assert unknown_domain_compliance("other.example")["latest_data_date"] is None


def test_an_organization_without_reports_has_grade_na_and_zero_figures():
    doc = compliance_doc(WindowScores(facts(**{"a.example": DomainFacts("a.example")})))
    assert doc["grade"] == "N/A" and doc["overall_score"] == 0.0 and doc["total_messages"] == 0


def test_a_domain_without_data_gets_the_zero_body_naming_it():
    doc = unknown_domain_compliance("other.example")
    assert doc["domain_scores"] == [{"domain": "other.example", "score": 0.0, "grade": "N/A",
                                     "compliance_rate": 0.0, "spf_pass_rate": 0.0,
                                     "dkim_pass_rate": 0.0, "policy": "none", "total_messages": 0}]


def test_policy_strength_averages_only_the_domains_with_reports_in_the_window():
    f = facts(**{"a.example": domain("a.example", {day(1): SpanTally(messages=10, compliant=10, spf_aligned_pass=10, dkim_aligned_pass=10)}),
                 "quiet.example": domain("quiet.example", {day(45): SpanTally(messages=5, compliant=0, spf_aligned_pass=0, dkim_aligned_pass=0)},
                                         PublishedPolicy("none"))})
    assert compliance_doc(WindowScores(f))["policy_strength"] == 100.0


def test_a_domain_gone_quiet_counts_nowhere_in_the_organizations_score():
    quiet = domain("quiet.example", {day(45): SpanTally(messages=50, compliant=0, spf_aligned_pass=0, dkim_aligned_pass=0)}, PublishedPolicy("none"))
    active = domain("a.example", {day(1): SpanTally(messages=10, compliant=10, spf_aligned_pass=10, dkim_aligned_pass=10)})
    both = WindowScores(facts(**{"a.example": active, "quiet.example": quiet}))
    alone = WindowScores(facts(**{"a.example": active}))
    assert both.org().score == alone.org().score == 100.0
    # Only old reports everywhere: no score, the last day they covered kept for the verdict.
    old = WindowScores(facts(**{"quiet.example": quiet})).org()
    assert (old.score, old.grade, old.last_report) == (None, "N/A", day(45))
