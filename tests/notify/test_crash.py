"""A process killed between committing an event and sending it loses nothing: the next drain
sends it, with the webhook-id it had."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from notify.drain import drain
from store import channels, outbox
from store.clock import utcnow
from store.models import Event, Outbox
from tests.notify.conftest import raise_alert
from tests.notify.receivers import WebhookReceiver
from tests.servers import ROOT

RAISE_THEN_HANG = textwrap.dedent("""
    import sys, time
    from store import events, open_db
    with open_db(sys.argv[1]).connection_context():
        events.raise_event(sys.argv[2], "no_reports", "no_reports:example.com",
                           title="No reports for 3 days",
                           domain="example.com")
    print("committed", flush=True)
    time.sleep(60)
""")


def child(*args: str, config) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=config.database_url, RUA_OFFLINE="1",
               RUA_LOCK_DIR=config.lock_dir, RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE="1")
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)     # and close its pipes


def test_killed_after_commit_before_send_is_sent_by_the_next_drain(
        org, hook, receiver, config):
    process = child("-c", RAISE_THEN_HANG, config.database_url, org.id, config=config)
    assert process.stdout.readline().strip() == "committed", process.stderr.read()
    kill(process)
    assert drain(config).delivered == 1
    [(webhook_id, payload)] = receiver.accepted
    assert webhook_id == Outbox.get().webhook_id and payload["data"]["id"] == Event.get().id


def test_killed_mid_send_is_sent_again_with_the_same_webhook_id(org, hook, receiver, config):
    raise_alert(org, now=utcnow())
    receiver.hold.clear()                      # the receiver takes the request and waits
    process = child("-c", "from cli import main; main()", "notify", "send", config=config)
    assert receiver.holding.wait(30), process.stderr.read() if process.poll() else "no request"
    kill(process)
    receiver.hold.set()                        # its answer reaches no one
    row = Outbox.get()
    assert row.delivered_at is None and row.claimed_until is not None
    assert drain(config).delivered == 0        # still claimed by the dead drain
    after_lease = utcnow() + outbox.LEASE
    assert drain(config, lambda: after_lease).delivered == 1
    assert receiver.seen == [row.webhook_id, row.webhook_id]


def test_a_drain_killed_while_one_receiver_hangs_has_recorded_the_others(
        org, hook, receiver, config):
    """Each result is recorded when it is known: rows another receiver accepted before the
    drain died are not sent again after the lease; only the hanging receiver's row is."""
    fast = WebhookReceiver(receiver.secret).start()
    try:
        channels.add(org.id, "webhook", fast.url, None, secret=fast.secret)
        raise_alert(org, now=utcnow())
        [hanging_row] = Outbox.select().where(Outbox.channel == hook.id)
        [fast_row] = Outbox.select().where(Outbox.channel != hook.id)
        receiver.hold.clear()
        process = child("-c", PATIENT_SEND, "notify", "send", config=config)
        assert receiver.holding.wait(30), process.stderr.read() if process.poll() else "no request"
        assert wait_for(lambda: Outbox.get_by_id(fast_row.id).delivered_at is not None)
        hanging = Outbox.get_by_id(hanging_row.id)
        assert hanging.attempts == 0 and hanging.claim is not None     # still in flight
        kill(process)
        receiver.hold.set()
        after_lease = utcnow() + outbox.LEASE
        assert drain(config, lambda: after_lease).delivered == 1
    finally:
        fast.stop()
    assert fast.seen == [fast_row.webhook_id]
    assert receiver.seen == [hanging_row.webhook_id, hanging_row.webhook_id]


# `rua notify send` whose attempts may last a minute: the hanging receiver is still in flight
# whenever the test looks, however loaded the machine.
PATIENT_SEND = ("import notify.webhook as webhook; webhook.DEADLINE_SECONDS = 60; "
                "from cli import main; main()")


def wait_for(condition, seconds: float = 30) -> bool:
    """Poll `condition` until it holds (True) or `seconds` pass (False): a bound, not a timing."""
    ends = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > ends:
            return False
        time.sleep(0.05)
    return True
