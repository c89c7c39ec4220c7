"""The drain's deadlines: a slow or silent receiver is cut off at its attempt's deadline, is not
tried again in the same run, and holds up nobody else's deliveries."""
from __future__ import annotations

from datetime import timedelta

import pytest

from notify import drain as draining
from notify import email as mail
from notify import webhook
from notify.drain import drain
from store import channels, outbox
from store.models import Outbox
from tests.notify.conftest import raise_alert
from tests.notify.receivers import Trickler

# An answer that would be a delivery, one byte every 0.1 s: each read waits a tenth of a
# second, so only a deadline on the whole attempt ends it early.
ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nX-Pad: " + b"x" * 200 + b"\r\n\r\n"


@pytest.fixture
def trickler():
    server = Trickler(ANSWER, 0.1).start()
    yield server
    server.stop()


@pytest.fixture
def slow_hook(org, trickler):
    return channels.add(org.id, "webhook", f"http://127.0.0.1:{trickler.port}/hook", None,
                        secret=webhook.new_secret())


def test_a_trickling_receiver_is_cut_off_and_holds_up_nobody(
        org, hook, slow_hook, receiver, trickler, clock, config, monkeypatch):
    # Ample for the prompt receiver on a loaded machine; the trickle needs 24 s to finish.
    monkeypatch.setattr(webhook, "DEADLINE_SECONDS", 3)
    lanes = draining.THREADS // 2           # two receivers share the pool
    for n in range(lanes + 2):
        raise_alert(org, f"d{n}.example")
    result = drain(config, clock)
    assert (result.delivered, result.retried) == (lanes + 2, lanes + 2)
    assert len(receiver.accepted) == lanes + 2
    slow = list(Outbox.select().where(Outbox.channel == slow_hook.id))
    assert all(row.attempts == 1 and row.delivered_at is None for row in slow)
    # Each lane's first attempt reached the slow receiver and ran out of time; the rows after
    # them were not tried again in this run.
    errors = sorted(row.last_error for row in slow)
    assert errors == ([webhook.NOT_REACHED] * lanes
                      + [webhook.NOT_REACHED + " (not tried again in the same run)"] * 2)


def test_a_receiver_not_reached_is_not_tried_again_in_later_batches(
        org, slow_hook, clock, config, monkeypatch):
    monkeypatch.setattr(webhook, "DEADLINE_SECONDS", 0.5)
    monkeypatch.setattr(draining, "BATCH", 2)
    for n in range(4):
        raise_alert(org, f"d{n}.example")
    assert drain(config, clock).retried == 4
    errors = sorted(row.last_error for row in Outbox.select())
    assert errors == ([webhook.NOT_REACHED] * 2
                      + [webhook.NOT_REACHED + " (not tried again in the same run)"] * 2)


def test_a_receiver_past_its_share_of_the_run_keeps_its_rows_for_the_next(
        org, hook, receiver, clock, config, monkeypatch):
    monkeypatch.setattr(draining, "SHARE_SECONDS", 0)
    raise_alert(org, "a.example")
    raise_alert(org, "b.example")
    result = drain(config, clock)
    assert (result.deferred, result.delivered, result.retried) == (2, 0, 0)
    assert not receiver.seen
    rows = list(Outbox.select())
    assert all(r.attempts == 0 and r.claim is None for r in rows)
    assert {r.next_attempt_at for r in rows} == {clock.now + outbox.FIRST_RETRY}
    monkeypatch.undo()
    clock.advance(timedelta(minutes=1))
    assert drain(config, clock).delivered == 2


def test_an_smtp_server_that_trickles_its_greeting_is_cut_off(org, clock, config, monkeypatch):
    greeting = Trickler(b"220 " + b"x" * 200 + b"\r\n", 0.1).start()
    monkeypatch.setattr(mail, "DEADLINE_SECONDS", 0.5)
    channels.add(org.id, "email", "ops@example.com", None)
    raise_alert(org)
    try:
        config = config.replace(smtp_url=f"smtp://127.0.0.1:{greeting.port}?from=rua@example.net")
        assert drain(config, clock).retried == 1
    finally:
        greeting.stop()
    assert Outbox.get().last_error.endswith(": no answer within 0.5 s")
