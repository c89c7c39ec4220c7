"""Draining the outbox: claim due rows, send each once, record what became of it.

At least once: a row is marked delivered only after the receiver accepted it, so a crash in
between sends it again later, with the same webhook-id. Sends run on a few threads (a slow
receiver does not hold up the rest); every database write stays on the calling thread.
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from notify import DeliveryError, email, message, webhook
from store import db, outbox
from store.clock import utcnow
from store.ids import new_ulid
from store.models import NotifyChannel, Organization

log = logging.getLogger("rua.notify")
BATCH = 50
THREADS = 8


@dataclass
class Drained:
    delivered: int = 0
    retried: int = 0
    failed: int = 0


def drain(config, clock=utcnow) -> Drained:
    """Send every due outbox row (rows due again later wait for a later drain)."""
    totals, names = Drained(), {}
    while True:
        token, rows = outbox.claim(clock(), BATCH)
        if not rows:
            return totals
        jobs = [(row.channel, row.webhook_id, row.event.type,
                 message.event_fields(row.event, _org_name(names, row.channel.org_id),
                                      config.app_url))
                for row in rows]
        with ThreadPoolExecutor(min(THREADS, len(jobs))) as pool:
            errors = list(pool.map(lambda job: attempt(*job, config), jobs))
        with db.atomic():      # one commit per batch; lost in a crash, the rows go out again
            for row, error in zip(rows, errors):
                _record(row, token, error, clock(), totals)


def send_test(channel: NotifyChannel, config) -> str | None:
    """Send the channel a test message now, outside the outbox; the error, or None."""
    org_name = channel.org.name
    return attempt(channel, f"msg_{new_ulid()}", message.TEST_TYPE,
                   message.probe_fields(org_name, utcnow()), config)


def attempt(channel: NotifyChannel, webhook_id: str, type_: str, data: dict,
            config) -> str | None:
    """Send one message to one channel; None when accepted, else why not (one line)."""
    try:
        if channel.kind == "webhook":
            now = utcnow()     # the signature's time is the attempt's, as receivers check it
            webhook.send(channel.target, channel.secret, webhook_id,
                         message.webhook_body(type_, data, now), now, config)
        else:
            smtp = email.parse_url(config.smtp_url)
            email.send(smtp, email.compose(smtp, channel.target, message.email_subject(data),
                                           message.email_text(data), webhook_id, utcnow()))
    except (DeliveryError, ValueError) as exc:
        return str(exc)
    return None


def _record(row, token: str, error: str | None, now, totals: Drained) -> None:
    if error is None:
        outbox.delivered(row.id, token, now)
        totals.delivered += 1
        return
    outbox.attempt_failed(row, token, now, error)
    if outbox.gives_up(row.attempts + 1):
        totals.failed += 1
        log.warning("gave up delivering %s to channel %s after %d attempts: %s",
                    row.webhook_id, row.channel_id, row.attempts + 1, error)
    else:
        totals.retried += 1
        log.info("delivery %s to channel %s failed (attempt %d): %s",
                 row.webhook_id, row.channel_id, row.attempts + 1, error)


def _org_name(names: dict, org_id: str) -> str:
    if org_id not in names:
        names[org_id] = Organization.get_by_id(org_id).name
    return names[org_id]
