"""The outbox: one row per event and channel, written in the event's transaction, sent later.

A row is due from next_attempt_at until it is delivered or given up. A drain claims due rows by
one UPDATE that only takes rows no live claim holds (on Postgres the rows are also picked with
SKIP LOCKED, so two drains take different rows instead of waiting on each other); a drain that
dies leaves its claim to expire, and the rows come back with the same webhook-id. Each failed
attempt waits twice as long as the one before (1 minute, doubling, at most 6 hours); after
MAX_ATTEMPTS the row is given up (failed_at), about 20 hours after the first attempt.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from store import db, is_postgres
from store.event_types import DELIVERABLE
from store.compiled import BATCH
from store.ids import new_ulid
from store.models import Event, NotifyChannel, Outbox

MAX_ATTEMPTS = 12
FIRST_RETRY = timedelta(minutes=1)
LONGEST_RETRY = timedelta(hours=6)
# Longer than a claimed batch takes to send: notify/drain.py starts no attempt that could
# end after it.
LEASE = timedelta(minutes=5)


def wants(types: list[str] | None, type_: str) -> bool:
    """Whether a channel of `types` (None: every deliverable type) is sent events of `type_`."""
    return type_ in DELIVERABLE and (types is None or type_ in types)


def retry_delay(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt: doubling from FIRST_RETRY, capped."""
    return min(FIRST_RETRY * 2 ** (attempts - 1), LONGEST_RETRY)


def gives_up(attempts: int) -> bool:
    """Whether a row is given up after its `attempts`-th failed attempt."""
    return attempts >= MAX_ATTEMPTS


def enqueue(org_id: str, event_ids: list[str], type_: str, now: datetime) -> int:
    """Queue the events for each of the organization's channels that wants their type (call it
    in the events' transaction, so an event is never stored without its deliveries)."""
    if type_ not in DELIVERABLE or not event_ids:
        return 0
    channels = [channel_id for channel_id, types
                in NotifyChannel.select(NotifyChannel.id, NotifyChannel.types)
                .where(NotifyChannel.org == org_id).tuples() if wants(types, type_)]
    rows = [{"id": new_ulid(), "event": event_id, "channel": channel_id,
             "webhook_id": f"msg_{new_ulid()}", "next_attempt_at": now, "created_at": now}
            for event_id in event_ids for channel_id in channels]
    for start in range(0, len(rows), BATCH):
        Outbox.insert_many(rows[start:start + BATCH]).on_conflict_ignore().execute()
    return len(rows)


def claim(now: datetime, limit: int, lease: timedelta = LEASE) -> tuple[str, list[Outbox]]:
    """Take up to `limit` due rows no live claim holds; (the claim's token, the rows with their
    event and channel). Two drains at once never get the same row."""
    token = new_ulid()
    due = (Outbox.select(Outbox.id)
           .where(Outbox.delivered_at.is_null(), Outbox.failed_at.is_null(),
                  Outbox.next_attempt_at <= now, _unclaimed(now))
           .order_by(Outbox.next_attempt_at, Outbox.id).limit(limit))
    if is_postgres():
        due = due.for_update(skip_locked=True)
    with db.atomic():
        # The claim test is repeated in the UPDATE: a row claimed since the SELECT is skipped.
        taken = (Outbox.update(claim=token, claimed_until=now + lease)
                 .where(Outbox.id.in_(due), _unclaimed(now)).execute())
    if not taken:
        return token, []
    rows = (Outbox.select(Outbox, Event, NotifyChannel)
            .join(Event).switch(Outbox).join(NotifyChannel)
            .where(Outbox.claim == token).order_by(Outbox.next_attempt_at, Outbox.id))
    return token, list(rows)


def delivered(row_id: str, token: str, now: datetime) -> bool:
    """Record a delivery; False when the claim had expired and another drain took the row."""
    return bool(Outbox.update(delivered_at=now, attempts=Outbox.attempts + 1, last_error="",
                              claim=None, claimed_until=None)
                .where(Outbox.id == row_id, Outbox.claim == token).execute())


def defer(row_id: str, token: str, due: datetime) -> bool:
    """Hand a claimed row back untried, due again at `due` (its attempts unchanged)."""
    return bool(Outbox.update(next_attempt_at=due, claim=None, claimed_until=None)
                .where(Outbox.id == row_id, Outbox.claim == token).execute())


def attempt_failed(row: Outbox, token: str, now: datetime, error: str) -> bool:
    """Record a failed attempt: due again after its back-off, or given up after MAX_ATTEMPTS."""
    attempts = row.attempts + 1
    changes = {"attempts": attempts, "last_error": error[:500], "claim": None,
               "claimed_until": None}
    if gives_up(attempts):
        changes["failed_at"] = now
    else:
        changes["next_attempt_at"] = now + retry_delay(attempts)
    return bool(Outbox.update(**changes)
                .where(Outbox.id == row.id, Outbox.claim == token).execute())


def _unclaimed(now: datetime):
    return Outbox.claimed_until.is_null() | (Outbox.claimed_until <= now)
