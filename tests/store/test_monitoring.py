"""The store's figures for /metrics, read as plain rows."""
from __future__ import annotations

from datetime import datetime

from store import monitoring
from store.models import Event, NotifyChannel, Outbox
from tests.factories import make_domain, make_org, make_report

NOW = datetime(2026, 11, 26, 12, 0, 0)


def _outbox(org, kind: str, **state):
    channel = NotifyChannel.create(org=org, kind=kind, target=f"{kind}-target")
    event = Event.create(org=org, type="dns_changed", severity="warning", title="t",
                         dedupe_key=f"k-{channel.id}")
    return Outbox.create(event=event, channel=channel, webhook_id=f"msg_{channel.id}",
                         next_attempt_at=NOW, **state)


def test_deliveries_are_counted_by_channel_kind_and_state(database):
    org = make_org()
    _outbox(org, "webhook")
    _outbox(org, "webhook", delivered_at=NOW)
    _outbox(org, "webhook", failed_at=NOW, attempts=12)
    _outbox(org, "email")
    assert sorted(monitoring.deliveries()) == [
        monitoring.Deliveries("email", 1, 0, 0), monitoring.Deliveries("webhook", 1, 1, 1)]


def test_dns_statuses_count_each_record_kind_of_each_checked_domain(database):
    org = make_org()
    make_domain(org, "a.example", dns={"dmarc": {"status": "ok"}, "spf": {"status": "error"}})
    make_domain(org, "b.example", dns={"dmarc": {"status": "ok"}, "spf": {"status": "ok"}})
    make_domain(org, "c.example")                   # never checked
    assert monitoring.dns_statuses() == {("dmarc", "ok"): 2, ("spf", "error"): 1,
                                         ("spf", "ok"): 1}
    assert monitoring.domains_by_state() == {"pending": 3}


def test_messages_by_reporter_add_up_the_report_summaries(database):
    org = make_org(name="Acme")
    make_report(org, "acme.example", org_name="google.com", records=[{"count": 4}])
    make_report(org, "acme.example", org_name="google.com", report_id="2",
                records=[{"count": 6, "dkim": "fail", "spf": "fail"}])
    assert monitoring.messages_by_reporter() == [
        monitoring.Messages("Acme", "google.com", "acme.example", 10, 4)]
    assert monitoring.reports_stored() == 2
