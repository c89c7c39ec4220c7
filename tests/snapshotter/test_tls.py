"""snapshotter/tls.py: the health `tls` object, the tls_failures rule and the TLS-RPT sentence,
from plain per-day values; then the same through stored TLS reports and a refresh."""
from __future__ import annotations

from datetime import date, timedelta

from jsonschema import Draft202012Validator

from rules.snapshot_facts import TlsTally
from snapshotter import jobs, tls
from store import snapshots
from store.event_types import SEVERITY
from store.encoding import loads
from store.models import Event
from tests.factories import make_domain, make_org, make_tls_report
from tests.ingest.tlsbuild import policy
from tests.snapshotter.reports import NOW, TODAY
from tests.test_contract import DOC

DAY = date(2026, 3, 31)


def tally(successful=100, failed=0, failures=(), types=("sts",)):
    return TlsTally(successful, failed, 1, tuple(failures), tuple(types))


def test_the_summary_sums_the_window_most_failed_type_first():
    days = {DAY: tally(90, 10, [("certificate-expired", 4), ("validation-failure", 6)]),
            DAY - timedelta(days=3): tally(50, 2, [("certificate-expired", 2)], ("tlsa",)),
            DAY - timedelta(days=40): tally(1, 99, [("dnssec-invalid", 99)])}
    assert tls.tls_summary(days, DAY) == {
        "successful_sessions": 140, "failed_sessions": 12, "success_rate": 92.11,
        "failure_types": [{"result_type": "certificate-expired", "sessions": 6},
                          {"result_type": "validation-failure", "sessions": 6}],
        "policy_types": ["sts", "tlsa"], "last_report_date": DAY}


def test_no_report_in_the_window_is_null():
    assert tls.tls_summary({DAY - timedelta(days=30): tally()}, DAY) is None
    assert tls.tls_summary({}, DAY) is None


def test_a_day_past_the_share_raises_naming_the_result_type_and_the_fix():
    days = {DAY - timedelta(days=1): tally(100, 0),
            DAY: tally(90, 10, [("certificate-expired", 10)])}
    [condition], cleared = tls.tls_failures("example.net", days, DAY)
    assert cleared == [] and condition.key == "tls_failures:example.net"
    assert SEVERITY[condition.type] == "warning" and condition.domain == "example.net"
    assert condition.title == ("TLS delivery to example.net failed for 10% of sessions "
                               "(Certificate expired)")
    assert "renew the MX host's certificate" in condition.detail
    assert "First seen that day: certificate-expired." in condition.detail


def test_a_share_at_the_threshold_of_known_types_clears():
    days = {DAY - timedelta(days=1): tally(90, 10, [("validation-failure", 10)]),
            DAY: tally(95, 5, [("validation-failure", 5)])}
    assert tls.tls_failures("example.com", days, DAY) == ([], ["tls_failures:example.com"])


def test_a_new_result_type_raises_even_under_the_share():
    days = {DAY - timedelta(days=1): tally(999, 1, [("validation-failure", 1)]),
            DAY: tally(999, 1, [("starttls-not-supported", 1)])}
    [condition], _ = tls.tls_failures("example.com", days, DAY)
    assert condition.title == "New TLS failure for example.com: STARTTLS not supported"
    assert "offer STARTTLS on every MX host" in condition.detail


def test_days_older_than_the_news_clear():
    days = {DAY - timedelta(days=tls.NEWS_DAYS): tally(0, 10, [("certificate-expired", 10)])}
    assert tls.tls_failures("example.com", days, DAY) == ([], ["tls_failures:example.com"])


def test_the_tls_rpt_verdict_says_whether_reports_arrive():
    entry = {"status": "ok", "details": "TLS-RPT record found."}
    assert tls.with_arrivals(entry, {DAY: tally()}, DAY)["details"] == (
        "TLS-RPT record found. TLS reports are arriving: the latest covers 2026-03-31.")
    assert tls.with_arrivals(entry, {}, DAY)["details"] == (
        "TLS-RPT record found. No TLS report has arrived yet.")
    missing = {"status": "error", "details": "No TLS-RPT record."}
    assert tls.with_arrivals(missing, {}, DAY) == missing


def day_of(offset: int) -> dict:
    day = (TODAY - timedelta(days=offset)).isoformat()
    return {"start": f"{day}T00:00:00Z", "end": f"{day}T23:59:59Z", "report_id": f"t-{offset}"}


def test_stored_reports_reach_the_health_blob_and_the_event_is_raised_then_cleared(database):
    org = make_org()
    make_domain(org, "example.net")
    make_tls_report(org, [policy("example.net", 500, 0)], **day_of(2))
    make_tls_report(org, [policy("example.net", 100, 300, {"certificate-expired": 300})],
                    **day_of(1))
    jobs.refresh_org(org.id, NOW)
    health = loads(snapshots.get(org.id, "health", "example.net").body)
    assert health["tls"] == {"successful_sessions": 600, "failed_sessions": 300,
                             "success_rate": 66.67,
                             "failure_types": [{"result_type": "certificate-expired",
                                                "sessions": 300}],
                             "policy_types": ["sts"],
                             "last_report_date": (TODAY - timedelta(days=1)).isoformat()}
    assert "TLS reports are arriving" in health["dns"]["tls_rpt"]["details"]
    schema = {"$ref": "#/components/schemas/DomainHealth", "components": DOC["components"]}
    assert not [e.message for e in Draft202012Validator(schema).iter_errors(health)]
    [event] = Event.select().where(Event.org == org.id, Event.cleared_at.is_null())
    assert event.type == "tls_failures" and event.domain == "example.net"
    assert health["action_items"][0]["type"] == "tls_failures"
    assert "renew" in health["action_items"][0]["suggested_action"]

    make_tls_report(org, [policy("example.net", 400, 0)], **day_of(0))    # fixed the next day
    jobs.refresh_org(org.id, NOW)
    assert Event.get_by_id(event.id).cleared_at is not None
