"""Report- and time-driven events raised and cleared from stored reports, with a chosen clock;
and the action items and counts the refresh builds from them."""
from __future__ import annotations

from datetime import datetime, timedelta

from snapshotter import conditions, jobs, refreshes
from store import events, snapshots, usage
from store.clock import to_epoch
from store.encoding import loads
from store.models import Event, Organization
from tests.factories import make_org
from tests.snapshotter.reports import NOW, TODAY, report_on

GOOD = [{"source_ip": "192.0.2.1", "count": 95},
        {"source_ip": "198.51.100.7", "count": 5, "dkim": "fail", "spf": "fail"}]


def open_events(org, type_=None):
    query = Event.select().where(Event.org == org.id, Event.cleared_at.is_null())
    if type_:
        query = query.where(Event.type == type_)
    return list(query.order_by(Event.created_at, Event.id))


def blob(org, kind, variant=""):
    found = snapshots.get(org.id, kind, variant)
    return loads(found.body) if found else None


def refresh(org, now=NOW):
    return jobs.refresh_org(org.id, now)


def test_a_compliance_drop_is_raised_then_cleared_when_compliance_recovers(database):
    org = make_org()
    for n in range(conditions.RECENT_DAYS, conditions.RECENT_DAYS + 30):
        report_on(org, "example.com", TODAY - timedelta(days=n), GOOD, p="reject")
    for n in range(conditions.RECENT_DAYS):
        report_on(org, "example.com", TODAY - timedelta(days=n),
                  [{"source_ip": "192.0.2.1", "count": 70},
                   {"source_ip": "203.0.113.9", "count": 30, "dkim": "fail", "spf": "fail"}],
                  p="reject")
    refresh(org)
    [drop] = open_events(org, "compliance_drop")
    assert drop.title == "DMARC compliance of example.com fell from 95% to 70%"
    health = blob(org, "health", "example.com")
    assert health["action_items"][0]["type"] == "compliance_drop"
    assert health["action_items"][0]["severity"] == "medium"
    assert health["action_items"][0]["cta_url"] == "/domains/example.com/health"
    for n in range(conditions.RECENT_DAYS):
        report_on(org, "example.com", TODAY - timedelta(days=n),
                  [{"source_ip": "192.0.2.1", "count": 2000}], p="reject", report_id=f"ok-{n}")
    refresh(org)
    assert open_events(org, "compliance_drop") == []
    assert Event.get_by_id(drop.id).cleared_at == NOW
    # (the failing sender was new after a week of history: its new_sender item stays)
    items = blob(org, "health", "example.com")["action_items"]
    assert "compliance_drop" not in {i["type"] for i in items}


def test_a_policy_change_in_the_reports_is_one_event_with_the_dns_checks_and_expires(database):
    org = make_org()
    for n in (20, 10, 5):
        report_on(org, "example.com", TODAY - timedelta(days=n), GOOD, p="none")
    report_on(org, "example.com", TODAY - timedelta(days=1), GOOD, p="reject")
    # The live check saw the same change first: same key, so the reports add no second event.
    events.raise_event(org.id, "policy_changed", "policy_changed:example.com",
                       title="DMARC policy of example.com changed from p=none to p=reject",
                       domain="example.com", now=NOW - timedelta(hours=2))
    refresh(org)
    assert len(open_events(org, "policy_changed")) == 1
    later = NOW + timedelta(days=conditions.NEWS_DAYS)
    refresh(org, later)
    assert open_events(org, "policy_changed") == []
    refresh(org, later + timedelta(hours=1))          # old news is not raised again
    assert open_events(org, "policy_changed") == []


def test_the_reports_alone_raise_policy_changed(database):
    org = make_org()
    report_on(org, "example.com", TODAY - timedelta(days=9), GOOD, p="quarantine")
    report_on(org, "example.com", TODAY - timedelta(days=1), GOOD, p="none")
    refresh(org)
    [event] = open_events(org, "policy_changed")
    assert (event.dedupe_key, event.severity) == ("policy_changed:example.com", "info")
    assert event.title == "DMARC policy of example.com changed from p=quarantine to p=none"


def test_no_reports_for_three_days_is_raised_and_the_next_report_clears_it(database):
    org = make_org()
    report_on(org, "example.com", TODAY - timedelta(days=3), GOOD, p="reject")
    refresh(org)
    assert open_events(org, "no_reports") == []
    refresh(org, NOW + timedelta(days=1))
    [event] = open_events(org, "no_reports")
    assert event.domain == "example.com" and event.severity == "warning"
    report_on(org, "example.com", TODAY, GOOD, p="reject")
    refresh(org, NOW + timedelta(days=1))
    assert open_events(org, "no_reports") == []


def test_reports_outside_the_window_say_so_and_no_reports_tops_the_action_items(database):
    org = make_org()
    report_on(org, "example.com", TODAY - timedelta(days=45), GOOD, p="none")
    # A DNS gap of higher severity: no_reports still comes first, it is why the score is low.
    events.raise_event(org.id, "dns_record_missing", "dns_record_missing:example.com:mta_sts",
                       title="MTA-STS missing", domain="example.com",
                       now=NOW)
    refresh(org)
    health = blob(org, "health", "example.com")
    # Not scored as 0 for it: N/A, and the verdict names the last day its reports covered.
    assert (health["grade"], health["overall_score"], health["total_messages"]) == ("N/A", 0, 0)
    assert health["verdict"].startswith("No reports for example.com in the last 30 days (the "
                                        f"last covers {TODAY - timedelta(days=45)})")
    assert health["action_items"][0]["type"] == "no_reports"
    assert "since " + str(TODAY - timedelta(days=45)) in health["action_items"][0]["title"]
    assert "empty_state" not in health
    overview = blob(org, "overview")
    [card] = overview["domain_cards"]
    assert (card["grade"], card["score"]) == ("N/A", 0)
    org_health = overview["org_health"]
    assert (org_health["health_state"], org_health["grade"], org_health["total_domains"]) == (
        "nodata", "N/A", 1)
    assert card["top_issue"].startswith("No DMARC reports for example.com")
    assert card["top_issue_severity"] == "medium" and card["action_count"] == 2


def test_parse_warnings_are_one_event_per_reporter_domain_and_day(database):
    org = make_org()
    day = TODAY - timedelta(days=1)
    at = NOW - timedelta(hours=3)
    report_on(org, "example.com", day, GOOD, warnings=["odd"], org_name="Receiver",
              report_id="a", received_at=at)
    report_on(org, "example.com", day, GOOD, warnings=["odd", "odder"], org_name="Receiver",
              report_id="b", received_at=at + timedelta(minutes=5))
    report_on(org, "example.com", day, GOOD, org_name="Other", report_id="c", received_at=at)
    refresh(org)
    [event] = open_events(org, "report_parse_warnings")
    assert event.title == "A report from Receiver about example.com was read with 2 warnings"
    assert event.severity == "info" and event.link == "/reports"
    report_on(org, "example.com", day, GOOD, org_name="Receiver", report_id="d",
              received_at=at + timedelta(hours=1))
    refresh(org)
    assert open_events(org, "report_parse_warnings") == []
    report_on(org, "example.com", day, GOOD, warnings=["odd"], org_name="Receiver",
              report_id="e", received_at=at + timedelta(hours=2))
    refresh(org)                                       # the day had its event already
    assert open_events(org, "report_parse_warnings") == []
    report_on(org, "example.com", TODAY, GOOD, warnings=["odd"], org_name="Receiver",
              report_id="f", received_at=NOW + timedelta(days=1))
    refresh(org, NOW + timedelta(days=1, hours=1))
    assert len(open_events(org, "report_parse_warnings")) == 1


def test_quota_near_cap_clears_when_its_hour_ends(database, config):
    org = make_org()
    hour = to_epoch(NOW) - to_epoch(NOW) % 3600
    assert usage.record_near_cap(org.id, hour + 600, 1000) is True
    refresh(org, NOW)
    assert blob(org, "overview")["action_items_summary"]["total_pending"] == 1
    refreshes.hour_started(NOW.replace(minute=59), config)
    assert len(open_events(org, "quota_near_cap")) == 1
    refreshes.hour_started(NOW.replace(minute=0) + timedelta(hours=1), config)
    assert open_events(org, "quota_near_cap") == []
    assert blob(org, "overview")["action_items_summary"]["total_pending"] == 0


# Types of the dnscheck's, whose events no refresh clears, one of each severity.
TYPE_OF_SEVERITY = {"info": "new_sender", "warning": "spf_lookup_limit",
                    "critical": "dns_record_missing"}


def test_items_are_most_urgent_first_at_most_five_and_counted_everywhere(database):
    org = make_org()
    report_on(org, "example.com", TODAY, GOOD, p="reject")
    for n, severity in enumerate(["info", "warning", "critical", "info", "warning", "info",
                                  "critical"]):
        type_ = TYPE_OF_SEVERITY[severity]
        events.raise_event(org.id, type_, f"{type_}:example.com:{n}",
                           title=f"item {n} {severity}", domain="example.com",
                           now=NOW - timedelta(minutes=n))
    this_hour = to_epoch(NOW.replace(minute=0))
    events.raise_event(org.id, "quota_near_cap", f"quota_near_cap:{this_hour}",
                       title="org-wide", now=NOW)
    refresh(org)
    health = blob(org, "health", "example.com")
    assert health["alert_count"] == 7 and "empty_state" not in health
    assert [i["severity"] for i in health["action_items"]] == [
        "high", "high", "medium", "medium", "low"]
    assert [i["title"] for i in health["action_items"][:2]] == ["item 2 critical",
                                                                "item 6 critical"]
    overview = blob(org, "overview")
    [card] = overview["domain_cards"]
    assert (card["top_issue"], card["top_issue_severity"], card["action_count"]) == (
        "item 2 critical", "high", 7)
    assert overview["action_items_summary"] == {"total_pending": 8, "high": 2, "medium": 3,
                                                "low": 3}
    assert overview["org_health"]["domains_needing_attention"] == 1


def test_an_acknowledged_event_leaves_the_items_and_the_refresh_settles_the_org(database):
    org = make_org()
    report_on(org, "example.com", TODAY, GOOD, p="reject")
    events.raise_event(org.id, "new_sender", "new_sender:example.com:1",
                       title="new", domain="example.com", now=NOW)
    refresh(org)
    assert blob(org, "health", "example.com")["alert_count"] == 1
    [event] = open_events(org)
    Organization.update(dirty_since=None).execute()
    assert events.acknowledge(event.id).acknowledged is True
    assert Organization.get_by_id(org.id).dirty_since is not None
    refresh(org)
    health = blob(org, "health", "example.com")
    assert health["alert_count"] == 0 and health["action_items"] == []
    assert health["empty_state"]["healthy"] is False       # DNS never checked
    assert Organization.get_by_id(org.id).dirty_since is None
    assert events.acknowledge("01HZX3Q9V2K8M4N6P7R8S9T0VW") is None


def test_docs_alerts_says_how_far_back_parse_warnings_look():
    import pathlib

    from snapshotter.event_refresh import WARNINGS_HORIZON_DAYS
    page = pathlib.Path(__file__).resolve().parents[2] / "docs" / "alerts.md"
    assert f"in the last {WARNINGS_HORIZON_DAYS} days are looked at" in page.read_text()
