"""The report- and time-driven event rules, on plain values (snapshotter/conditions.py)."""
from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest

from rules.snapshot_facts import PublishedPolicy, SpanTally
from snapshotter import conditions as c
from store.event_types import SEVERITY

TODAY = date(2026, 3, 31)
NOW = datetime(2026, 3, 31, 12, 0, 0)


def days_of(recent_rate: float, before_rate: float, per_day: int = 100) -> dict:
    """Every day of the last 37 with per_day messages: the last 7 at recent_rate % compliant."""
    out = {}
    for n in range(c.RECENT_DAYS + c.BEFORE_DAYS):
        rate = recent_rate if n < c.RECENT_DAYS else before_rate
        out[TODAY - timedelta(days=n)] = SpanTally(per_day, round(per_day * rate / 100))
    return out


def test_compliance_ten_points_below_the_thirty_days_before_raises_a_warning():
    out = c.compliance_drop("example.com", days_of(85, 95), TODAY)
    [raised] = out.raised
    assert (raised.type, raised.key, SEVERITY[raised.type], raised.domain) == (
        "compliance_drop", "compliance_drop:example.com", "warning", "example.com")
    assert raised.title == "DMARC compliance of example.com fell from 95% to 85%"
    assert out.cleared == []


@pytest.mark.parametrize("recent, before, per_day", [
    (86, 95, 100),      # 9 points: not a drop
    (95, 80, 100),      # a rise
    (50, 95, 10),       # 70 messages in the last 7 days: too few to say
])
def test_no_drop_or_too_few_messages_clears(recent, before, per_day):
    out = c.compliance_drop("example.com", days_of(recent, before, per_day), TODAY)
    assert out.raised == [] and out.cleared == ["compliance_drop:example.com"]


def test_the_previous_thirty_days_need_enough_messages_too():
    days = {d: t for d, t in days_of(50, 95).items() if (TODAY - d).days < c.RECENT_DAYS}
    assert c.compliance_drop("example.com", days, TODAY).raised == []


def policies(*entries):
    return [(TODAY - timedelta(days=n), PublishedPolicy(p)) for n, p in entries]


def test_a_changed_p_in_the_reports_raises_policy_changed_with_the_dns_checks_key():
    out = c.policy_change("example.com", policies((20, "none"), (2, "reject")), TODAY)
    [raised] = out.raised
    assert (raised.key, SEVERITY[raised.type]) == ("policy_changed:example.com", "info")
    assert raised.title == "DMARC policy of example.com changed from p=none to p=reject"


@pytest.mark.parametrize("entries", [
    [(20, "none")],                                  # one policy
    [(20, "none"), (c.NEWS_DAYS, "reject")],          # changed too long ago
    [(20, "none"), (3, "")],                          # unreadable p is no change
])
def test_no_recent_change_raises_nothing(entries):
    assert c.policy_change("example.com", policies(*entries), TODAY).raised == []


def test_only_the_latest_change_counts():
    # pct changes make entries too; p went none -> quarantine long ago, then stayed.
    entries = [(30, PublishedPolicy("none")), (20, PublishedPolicy("quarantine")),
               (2, PublishedPolicy("quarantine", 50))]
    out = c.policy_change("example.com", [(TODAY - timedelta(days=n), p) for n, p in entries],
                          TODAY)
    assert out.raised == []


@pytest.mark.parametrize("age, expired", [(6, False), (7, True)])
def test_policy_changed_is_news_for_a_week(age, expired):
    assert c.expired(NOW - timedelta(days=age), NOW) is expired


@pytest.mark.parametrize("last, raised", [(3, False), (4, True)])
def test_no_reports_after_three_days(last, raised):
    out = c.no_reports("example.com", TODAY - timedelta(days=last), TODAY)
    assert bool(out.raised) is raised and bool(out.cleared) is not raised
    if raised:
        assert out.raised[0].title == (
            f"No DMARC reports for example.com since {TODAY - timedelta(days=last)}")


def test_a_domain_that_never_had_reports_is_not_missing_any():
    out = c.no_reports("example.com", None, TODAY)
    assert out.raised == [] and out.cleared == []


def latest(warnings, at=NOW, reporter="Receiver, Inc."):
    return c.Latest("example.com", reporter, at, warnings)


def test_parse_warnings_raise_once_per_reporter_domain_and_day():
    out = c.parse_warnings(latest(2), set(), set())
    [raised] = out.raised
    prefix = c.parse_warnings_prefix("example.com", "Receiver, Inc.")
    assert raised.key == prefix + "2026-03-31" and SEVERITY[raised.type] == "info"
    assert c.parse_warnings(latest(1), {raised.key}, set()).raised == []      # still open
    assert c.parse_warnings(latest(1), set(), {raised.key}).raised == []      # cleared today


def test_a_newer_days_warnings_replace_the_older_event():
    old = c.parse_warnings_prefix("example.com", "Receiver, Inc.") + "2026-03-30"
    out = c.parse_warnings(latest(1), {old}, set())
    assert out.cleared == [old] and out.raised[0].key.endswith("2026-03-31")


def test_a_clean_newer_report_clears_the_reporters_events():
    key = c.parse_warnings_prefix("example.com", "Receiver, Inc.") + "2026-03-30"
    out = c.parse_warnings(latest(0), {key}, set())
    assert out.raised == [] and out.cleared == [key]


def test_reporters_and_domains_have_their_own_keys():
    keys = {c.parse_warnings_prefix(d, r) for d in ("a.example", "b.example")
            for r in ("x", "y", "a.example:x")}
    assert len(keys) == 6 and all(len(k) < 64 for k in keys)


def test_quota_events_clear_once_their_hour_is_over():
    hour = 1_774_958_400            # 2026-03-31T12:00:00Z
    keys = [f"quota_near_cap:{hour - 3600}", f"quota_near_cap:{hour}", "quota_near_cap:x"]
    assert c.quota_hours_ended(keys, hour) == [f"quota_near_cap:{hour - 3600}"]
    assert c.quota_hours_ended(keys, hour + 3600) == keys[:2]
