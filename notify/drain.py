"""Draining the outbox: claim due rows, send each once, record what became of it.

At least once: a row is marked delivered only after the receiver accepted it, so a crash in
between sends it again later, with the same webhook-id. Each attempt has one total deadline
(webhook.py, email.py). A batch's rows are grouped by receiver (a webhook URL, or the SMTP
server) and each receiver gets its share of the threads (at least one), so a slow receiver
holds up only its own rows. A receiver that could not be reached is not tried again in the same
run, and one still being sent to SHARE_SECONDS after its first send keeps its remaining rows
for the next run, so the next batch never waits long on it either. Each result is recorded as soon as it is known, on the calling thread (every database
write stays there).
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from notify import DeliveryError, NotReached, email, message, webhook
from store import outbox
from store.clock import utcnow
from store.ids import new_ulid
from store.models import NotifyChannel, Organization

log = logging.getLogger("rua.notify")
BATCH = 50
THREADS = 8
# How long a receiver may keep being sent to in one run, from its first send; its rows not
# started by then wait for the next run.
SHARE_SECONDS = 20
# The longest attempt (email.DEADLINE_SECONDS) and a margin: no send starts that could end
# after the batch's claim (outbox.LEASE) has run out and another drain may take the row.
LEASE_MARGIN_SECONDS = 30


@dataclass
class Drained:
    delivered: int = 0
    retried: int = 0
    failed: int = 0
    deferred: int = 0      # not tried: their receiver's share of the run was spent


@dataclass(frozen=True)
class Attempt:
    error: str | None = None        # None: the receiver accepted it
    not_reached: bool = False       # no exchange with the receiver (NotReached)
    deferred: bool = False          # not tried in this run


@dataclass(frozen=True)
class _Job:
    row: object
    channel: NotifyChannel
    type_: str
    data: dict


def scheduled(now, config) -> Drained:
    """Every minute: send the outbox's due alerts. The drain keeps its own clock, so a long
    drain's claims and retries are timed from when each happens, not from `now`."""
    result = drain(config)
    if result.delivered or result.retried or result.failed:
        log.info("alerts: %d delivered, %d to retry, %d given up", result.delivered,
                 result.retried, result.failed)
    return result


def drain(config, clock=utcnow) -> Drained:
    """Send every due outbox row (rows due again later wait for a later drain)."""
    totals, names, receivers = Drained(), {}, {}
    with ThreadPoolExecutor(THREADS) as pool:
        while True:
            token, rows = outbox.claim(clock(), BATCH)
            if not rows:
                return totals
            started = time.monotonic()
            jobs = [_Job(row, row.channel, row.event.type,
                         message.event_fields(row.event, _org_name(names, row.channel.org_id),
                                              config.app_url))
                    for row in rows]
            done: queue.Queue = queue.Queue()
            for receiver, part in _slices(jobs, receivers):
                pool.submit(_send_slice, receiver, part, config, started, done)
            for _ in jobs:
                job, outcome = done.get()
                _record(job.row, token, outcome, clock(), totals)


def send_test(channel: NotifyChannel, config) -> str | None:
    """Send the channel a test message now, outside the outbox; the error, or None."""
    org_name = channel.org.name
    return attempt(channel, f"msg_{new_ulid()}", message.TEST_TYPE,
                   message.probe_fields(org_name, utcnow()), config).error


def attempt(channel: NotifyChannel, webhook_id: str, type_: str, data: dict,
            config) -> Attempt:
    """Send one message to one channel: what became of it."""
    try:
        if channel.kind == "webhook":
            now = utcnow()     # the signature's time is the attempt's, as receivers check it
            webhook.send(channel.target, channel.secret, webhook_id,
                         message.webhook_body(type_, data, now), now, config)
        else:
            smtp = email.parse_url(config.smtp_url)
            email.send(smtp, email.compose(smtp, channel.target, message.email_subject(data),
                                           message.email_text(data), webhook_id, utcnow()))
    except NotReached as exc:
        return Attempt(str(exc), not_reached=True)
    except (DeliveryError, ValueError) as exc:
        return Attempt(str(exc))
    return Attempt()


def _slices(jobs: list[_Job], receivers: dict) -> list[tuple[_Receiver, list[_Job]]]:
    """Each receiver's jobs dealt into slices, one thread each: a receiver gets its share of
    the pool (at least one slice), so a burst to one receiver still goes out on every thread.
    `receivers` keeps each receiver's state for the whole run."""
    groups: dict[str, list[_Job]] = {}
    for job in jobs:
        key = job.channel.target if job.channel.kind == "webhook" else "smtp"
        groups.setdefault(key, []).append(job)
    width = max(1, THREADS // len(groups))
    slices = []
    for key, group in groups.items():
        receiver = receivers.setdefault(key, _Receiver())
        slices += [(receiver, group[first::width]) for first in range(min(width, len(group)))]
    return slices


class _Receiver:
    """A receiver (a webhook URL, or the one SMTP server) during a run: when it was first sent
    to, and, once an attempt has not reached it, why (its slices then stop trying)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.started: float | None = None
        self.unreached: Attempt | None = None

    def start(self) -> float:
        with self._lock:
            if self.started is None:
                self.started = time.monotonic()
            return self.started

    def note(self, outcome: Attempt) -> None:
        with self._lock:
            if self.unreached is None:
                self.unreached = outcome


def _send_slice(receiver: _Receiver, jobs: list[_Job], config, batch_started: float,
               done: queue.Queue) -> None:
    """Send one slice's jobs in order, putting each (job, outcome) on `done` at once."""
    for job in jobs:
        if receiver.unreached is not None:
            outcome = Attempt(f"{receiver.unreached.error} (not tried again in the same run)",
                              not_reached=True)
        elif not _may_start(receiver.start(), batch_started):
            outcome = Attempt(deferred=True)
        else:
            outcome = _attempt(job, config)
            if outcome.not_reached:
                receiver.note(outcome)
        done.put((job, outcome))


def _attempt(job: _Job, config) -> Attempt:
    try:
        return attempt(job.channel, job.row.webhook_id, job.type_, job.data, config)
    except Exception:       # a fault here must still give the row an outcome, or drain waits
        log.exception("sending %s failed unexpectedly", job.row.webhook_id)
        return Attempt("rua could not send it (see rua's log)")


def _may_start(receiver_started: float, batch_started: float) -> bool:
    now = time.monotonic()
    lease_left = outbox.LEASE.total_seconds() - (now - batch_started)
    return now - receiver_started < SHARE_SECONDS and lease_left > LEASE_MARGIN_SECONDS


def _record(row, token: str, outcome: Attempt, now, totals: Drained) -> None:
    if outcome.deferred:
        outbox.defer(row.id, token, now + outbox.FIRST_RETRY)
        totals.deferred += 1
        return
    if outcome.error is None:
        outbox.delivered(row.id, token, now)
        totals.delivered += 1
        return
    outbox.attempt_failed(row, token, now, outcome.error)
    if outbox.gives_up(row.attempts + 1):
        totals.failed += 1
        log.warning("gave up delivering %s to channel %s after %d attempts: %s",
                    row.webhook_id, row.channel_id, row.attempts + 1, outcome.error)
    else:
        totals.retried += 1
        log.info("delivery %s to channel %s failed (attempt %d): %s",
                 row.webhook_id, row.channel_id, row.attempts + 1, outcome.error)


def _org_name(names: dict, org_id: str) -> str:
    if org_id not in names:
        names[org_id] = Organization.get_by_id(org_id).name
    return names[org_id]
