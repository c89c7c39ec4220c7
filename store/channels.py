"""Notification channels: add, remove, find, and list them with the state of their deliveries."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from peewee import JOIN, Case, fn

from store.clock import stored_instant, utcnow
from store.models import NotifyChannel, Organization, Outbox


@dataclass(frozen=True)
class ChannelState:
    channel: NotifyChannel
    org_name: str
    pending: int
    delivered: int
    failed: int
    last_delivered_at: datetime | None
    last_error: str                # of the newest failed attempt, "" when none


def add(org_id: str, kind: str, target: str, types: list[str] | None,
        secret: str | None = None, now: datetime | None = None) -> NotifyChannel:
    return NotifyChannel.create(org=org_id, kind=kind, target=target, types=types,
                                secret=secret, created_at=now or utcnow())


def get(channel_id: str) -> NotifyChannel | None:
    return NotifyChannel.get_or_none(NotifyChannel.id == channel_id)


def remove(channel_id: str) -> bool:
    """Delete the channel and its queued and past deliveries; False when there was none."""
    return bool(NotifyChannel.delete().where(NotifyChannel.id == channel_id).execute())


def states(org_id: str | None = None) -> list[ChannelState]:
    """Each channel (of one organization, or all) with counts of its deliveries by state."""
    def count(condition):
        return fn.COALESCE(fn.SUM(Case(None, [(condition, 1)], 0)), 0)
    done, gone = Outbox.delivered_at.is_null(False), Outbox.failed_at.is_null(False)
    query = (NotifyChannel
             .select(NotifyChannel, Organization.name,
                     count(Outbox.id.is_null(False) & ~done & ~gone).alias("pending"),
                     count(done).alias("delivered"), count(gone).alias("failed"),
                     fn.MAX(Outbox.delivered_at).alias("last_delivered_at"))
             .join(Organization).switch(NotifyChannel)
             .join(Outbox, JOIN.LEFT_OUTER)
             .group_by(NotifyChannel.id, Organization.name)
             .order_by(Organization.name, NotifyChannel.created_at, NotifyChannel.id))
    if org_id is not None:
        query = query.where(NotifyChannel.org == org_id)
    return [ChannelState(row, row.org.name, int(row.pending), int(row.delivered),
                         int(row.failed), stored_instant(row.last_delivered_at),
                         _last_error(row.id)) for row in query]


def failures(channel_id: str, limit: int = 5) -> list[Outbox]:
    """The channel's newest given-up deliveries."""
    return list(Outbox.select().where(Outbox.channel == channel_id, Outbox.failed_at.is_null(False))
                .order_by(Outbox.failed_at.desc()).limit(limit))


def _last_error(channel_id: str) -> str:
    row = (Outbox.select(Outbox.last_error)
           .where(Outbox.channel == channel_id, Outbox.last_error != "")
           .order_by(Outbox.next_attempt_at.desc()).tuples().first())
    return row[0] if row else ""

