"""Webhook delivery from the outbox to a live receiver that verifies each signature."""
from __future__ import annotations

import threading
from datetime import timedelta

from notify import webhook
from notify.drain import drain
from store import channels, outbox
from store.clock import utcnow
from store.models import Outbox
from tests.notify.conftest import raise_alert
from tests.notify.receivers import WebhookReceiver


def test_an_event_is_queued_for_each_channel_that_wants_its_type(org, hook, receiver):
    only_policy = channels.add(org.id, "webhook", receiver.url, ["policy_changed"],
                               secret=receiver.secret)
    raise_alert(org, type_="dns_record_missing")
    raise_alert(org, type_="weak_dkim_key")            # shown in the app only
    raise_alert(org, type_="policy_changed")
    queued = {(r.channel_id, r.event.type) for r in Outbox.select()}
    assert queued == {(hook.id, "dns_record_missing"), (hook.id, "policy_changed"),
                      (only_policy.id, "policy_changed")}


def test_an_event_raised_again_while_open_queues_nothing_more(org, hook):
    assert raise_alert(org) and not raise_alert(org)
    assert Outbox.select().count() == 1


def test_a_delivery_is_signed_and_carries_the_event(org, hook, receiver, clock, config):
    raise_alert(org)
    assert drain(config, clock).delivered == 1
    row = Outbox.get()
    assert receiver.forged == 0 and [i for i, _ in receiver.accepted] == [row.webhook_id]
    payload = receiver.accepted[0][1]
    assert payload["type"] == "dns_record_missing"
    assert payload["data"] | {"id": None} == {
        "id": None, "type": "dns_record_missing", "type_label": "DNS record missing",
        "severity": "critical", "title": "No SPF record for example.com",
        "detail": "Publish one.", "domain": "example.com", "link": "/domains/example.com/dns",
        "acknowledged": False, "created_at": "2026-03-02T09:00:00Z", "organization": "Acme"}
    assert row.delivered_at == clock.now and row.attempts == 1


def test_with_rua_app_url_set_the_link_is_absolute_on_it(org, hook, receiver, clock, config):
    raise_alert(org)
    assert drain(config.replace(app_url="https://dmarc.example.net/"), clock).delivered == 1
    link = receiver.accepted[0][1]["data"]["link"]
    assert link == "https://dmarc.example.net/domains/example.com/dns"


def test_a_forged_signature_is_refused_and_retried(org, hook, receiver, clock, config):
    hook.secret = webhook.new_secret()      # the receiver still holds the old one
    hook.save()
    raise_alert(org)
    assert drain(config, clock).retried == 1
    assert receiver.forged == 1 and not receiver.accepted
    assert "HTTP 401" in Outbox.get().last_error


def test_a_receiver_that_was_down_gets_each_message_once_with_one_webhook_id(
        org, hook, receiver, clock, config):
    other = WebhookReceiver(webhook.new_secret()).start()
    channels.add(org.id, "webhook", other.url, None, secret=other.secret)
    receiver.stop()                                    # down: nothing listens on its port
    raise_alert(org, "example.com")
    raise_alert(org, "example.org")
    try:
        assert drain(config, clock).delivered == 2     # the other receiver's
        clock.advance(timedelta(minutes=1))
        assert drain(config, clock).retried == 2
        receiver.start()
        receiver.status = 503                          # up, but not ready yet
        clock.advance(timedelta(minutes=2))
        assert drain(config, clock).retried == 2
        receiver.status = 200
        clock.advance(timedelta(seconds=30))
        assert drain(config, clock).delivered == 0     # not due yet: 4 minutes after the third
        clock.advance(timedelta(minutes=4))
        assert drain(config, clock).delivered == 2
        assert drain(config, clock).delivered == 0
    finally:
        other.stop()
    ids = {r.webhook_id for r in Outbox.select().where(Outbox.channel == hook.id)}
    assert sorted(i for i, _ in receiver.accepted) == sorted(ids)
    assert sorted(receiver.seen) == sorted(list(ids) * 2)       # answered 503, then 200
    assert len(other.accepted) == 2 and not set(i for i, _ in other.accepted) & ids
    assert {r.attempts for r in Outbox.select().where(Outbox.channel == hook.id)} == {4}


def test_a_delivery_is_given_up_after_the_last_attempt(org, hook, receiver, clock, config):
    receiver.stop()
    raise_alert(org)
    for attempt in range(1, outbox.MAX_ATTEMPTS):
        assert drain(config, clock).retried == 1
        clock.advance(outbox.retry_delay(attempt))
    assert drain(config, clock).failed == 1
    clock.advance(timedelta(days=30))
    assert drain(config, clock).retried == 0
    row = Outbox.get()
    assert row.attempts == outbox.MAX_ATTEMPTS and row.failed_at is not None
    assert row.last_error == webhook.NOT_REACHED


def test_back_off_doubles_from_a_minute_up_to_six_hours():
    delays = [outbox.retry_delay(n) for n in range(1, outbox.MAX_ATTEMPTS)]
    assert delays[:3] == [timedelta(minutes=1), timedelta(minutes=2), timedelta(minutes=4)]
    assert delays[-1] == timedelta(hours=6) and delays == sorted(delays)
    assert timedelta(hours=18) < sum(delays, timedelta()) < timedelta(hours=24)


def test_two_drains_never_claim_the_same_row(org, hook, clock):
    for n in range(5):
        raise_alert(org, f"d{n}.example")
    first_token, first = outbox.claim(clock(), 3)
    second_token, second = outbox.claim(clock(), 10)
    assert len(first) == 3 and len(second) == 2
    assert not {r.id for r in first} & {r.id for r in second}
    assert outbox.claim(clock(), 10)[1] == []


def test_a_crashed_drains_claim_expires_and_the_row_comes_back_with_its_id(org, hook, clock):
    raise_alert(org)
    _, [taken] = outbox.claim(clock(), 10)
    clock.advance(outbox.LEASE - timedelta(seconds=1))
    assert outbox.claim(clock(), 10)[1] == []
    clock.advance(timedelta(seconds=1))
    token, [again] = outbox.claim(clock(), 10)
    assert again.webhook_id == taken.webhook_id
    assert not outbox.delivered(taken.id, "an expired claim", clock())
    assert outbox.delivered(again.id, token, clock())


def test_concurrent_drains_send_each_row_once(org, hook, receiver, config, clock, database):
    for n in range(60):
        raise_alert(org, f"d{n}.example")
    results = []

    def run():
        with database.connection_context():
            results.append(drain(config, clock))
    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sum(r.delivered for r in results) == 60
    assert len(receiver.seen) == 60 == len(set(receiver.seen))


def test_the_scheduler_job_sends_due_alerts(org, hook, receiver, config):
    from jobs import scheduler, table
    raise_alert(org, now=utcnow())
    [job] = [job for name, job, _ in table.job_table(config) if name == "notify"]
    assert scheduler.run_exclusive("notify", job, config)
    assert [i for i, _ in receiver.accepted] == [Outbox.get().webhook_id]
