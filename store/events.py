"""Conditions as events: raised once per dedupe key until cleared, then free to be raised again.

One open event per (organization, dedupe key) is a partial unique index (cleared_at IS NULL),
so two ingests or scheduler runs raising the same condition at once insert one
row between them on SQLite and Postgres alike: the loser's insert is ignored, not an error.
Raising or clearing marks the organization for the snapshotter, whose action items read events.
An event of a deliverable type is queued for its channels in the same transaction (store/outbox.py).
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from peewee import Case, fn

from store import compiled, db, outbox
from store.event_types import SEVERITY, Outcome
from store.clock import utcnow
from store.ids import new_ulid
from store.models import Event, Organization


# The mark while a refresh is under way: later than any change, so a change marked during the
# refresh takes its place and keeps the organization dirty after it. Left by a refresh that
# died, it is refreshed by the next run, which finds the organization's lock free.
REFRESHING = datetime(9999, 1, 1)


def raise_event(org_id: str, type_: str, dedupe_key: str, *, title: str,
                detail: str = "", domain: str = "", link: str | None = None,
                now: datetime | None = None, mark: bool = True) -> bool:
    """Open the event of `dedupe_key` unless one is open already; True when this call opened it.
    mark=False: the caller is the refresh that will show it (snapshotter/event_refresh.py)."""
    return bool(raise_events(org_id, type_, [{"dedupe_key": dedupe_key, "title": title,
                                              "detail": detail, "domain": domain, "link": link}],
                             now=now, mark=mark))


def raise_events(org_id: str, type_: str, raised: list[dict], *,
                 now: datetime | None = None, mark: bool = True) -> int:
    """raise_event for several events of one type (dicts of dedupe_key, title and optional
    detail, domain, link) in one insert; how many this call opened. The severity is the
    type's (store/event_types.py); an unknown type is a KeyError."""
    now = now or utcnow()
    severity = SEVERITY[type_]
    rows = [{"detail": "", "domain": "", "link": None, **each, "id": new_ulid(), "org": org_id,
             "type": type_, "severity": severity, "title": each["title"][:255],
             "created_at": now} for each in raised]
    if not rows:
        return 0
    with db.atomic():
        # In key order: two transactions raising the same conditions then wait for each other
        # in one order, never in a circle (a deadlock, which Postgres ends by refusing one).
        # RETURNING gives the rows inserted, not those an open event of their key ignored.
        in_key_order = sorted(rows, key=lambda row: row["dedupe_key"])
        stored = {event_id for (event_id,) in Event.insert_many(in_key_order)
                  .on_conflict_ignore().returning(Event.id).tuples().execute()}
        opened = [row["id"] for row in rows if row["id"] in stored]   # in the callers' order
        if opened and mark:
            mark_dirty(org_id, now)
        outbox.enqueue(org_id, opened, type_, now)
    return len(opened)


def clear(org_id: str, dedupe_keys: Iterable[str], now: datetime | None = None,
          mark: bool = True) -> int:
    """Record that the conditions of `dedupe_keys` have gone; how many open events that closed."""
    keys = list(dedupe_keys)
    if not keys:
        return 0
    now = now or utcnow()
    with db.atomic():
        closed = (Event.update(cleared_at=now)
                  .where(Event.org == org_id, Event.dedupe_key.in_(keys),
                         Event.cleared_at.is_null())
                  .execute())
        if closed and mark:
            mark_dirty(org_id, now)
    return closed


def apply(org_id: str, outcome: Outcome, now: datetime, *, open_now: set[str] | None = None,
          mark: bool = True) -> bool:
    """Clear the outcome's keys, then raise its events; True when any event changed.
    open_now: the keys open before, when the caller read them: only those are cleared, and a
    key already open (and not cleared) is not raised again."""
    closing = outcome.cleared
    if open_now is not None:
        closing = sorted({k for k in outcome.cleared if k in open_now})
    changed = clear(org_id, closing, now, mark=mark) > 0
    for c in outcome.raised:
        if open_now is not None and c.key in open_now and c.key not in closing:
            continue
        changed |= raise_event(org_id, c.type, c.key, title=c.title, detail=c.detail,
                               domain=c.domain, link=c.link, now=now, mark=mark)
    return changed


def open_keys(org_id: str, prefix: str) -> set[str]:
    """Dedupe keys of the organization's open events that start with `prefix`."""
    query = (Event.select(Event.dedupe_key)
             .where(Event.org == org_id, Event.cleared_at.is_null(),
                    # Not LIKE: "_" in a key is a character, not a wildcard.
                    fn.SUBSTR(Event.dedupe_key, 1, len(prefix)) == prefix)
             .tuples())
    return {key for (key,) in query}


def acknowledge(event_id: str, now: datetime | None = None) -> Event | None:
    """Mark an event handled (in the app, never through the API); None when there is no such
    event. Its action item goes, so the organization is marked for the snapshotter."""
    event = Event.get_or_none(Event.id == event_id)
    if event is None:
        return None
    with db.atomic():
        if not event.acknowledged:
            Event.update(acknowledged=True).where(Event.id == event_id).execute()
            event.acknowledged = True
            mark_dirty(event.org_id, now)
    return event


def mark_dirty(org_id: str, now: datetime | None = None) -> None:
    """The organization's blobs need recomputing (ingest marks it with every report); the
    earliest mark stays. The row is written even when marked already: its lock, held to the
    end of the caller's transaction, makes take_dirty wait for that transaction's commit, so
    the refresh that follows reads what it wrote."""
    _MARK_DIRTY.execute(org=org_id, now=Organization.dirty_since.db_value(now or utcnow()))


def reports_changed(org_id: str, now: datetime | None = None) -> None:
    """A DMARC report was stored or taken out: the organization's report version moves (every
    answer a process remembers for it is computed again) and it is marked dirty, in one
    statement. A replaced report and its replacement leave the reports' sums as they were;
    the version moves all the same."""
    _REPORTS_CHANGED.execute(org=org_id,
                             now=Organization.dirty_since.db_value(now or utcnow()))


def take_dirty(org_id: str) -> datetime | None:
    """Mark the organization REFRESHING before a refresh reads the store; the mark it had. A
    change marked before is read by that refresh, one marked after takes REFRESHING's place."""
    rows = _DIRTY_SINCE.run(org=org_id)
    if not rows:
        raise LookupError(f"no organization {org_id}")
    if rows[0][0] is None:
        return None
    _TAKE_DIRTY.execute(org=org_id, refreshing=Organization.dirty_since.db_value(REFRESHING))
    return Organization.dirty_since.python_value(rows[0][0])


def settle_dirty(org_id: str) -> None:
    """The refresh that took the mark is done: clean, unless a change marked it meanwhile."""
    _SETTLE_DIRTY.execute(org=org_id, refreshing=Organization.dirty_since.db_value(REFRESHING))


def dirty_orgs() -> list[str]:
    """The organizations marked dirty, the oldest mark first."""
    return [org_id for (org_id,) in _DIRTY.run()]


# Compiled once: ingest marks the organization with every report it stores.
_EARLIEST_MARK = (lambda now: Case(
    None, [((Organization.dirty_since.is_null()) | (Organization.dirty_since > now), now)],
    Organization.dirty_since))
_MARK_DIRTY = compiled.Compiled(lambda org, now: Organization.update(
    dirty_since=_EARLIEST_MARK(now)).where(Organization.id == org))
_REPORTS_CHANGED = compiled.Compiled(lambda org, now: Organization.update(
    dirty_since=_EARLIEST_MARK(now), report_version=Organization.report_version + 1)
    .where(Organization.id == org))
_DIRTY_SINCE = compiled.Compiled(lambda org: Organization.select(Organization.dirty_since)
                                 .where(Organization.id == org))
_TAKE_DIRTY = compiled.Compiled(lambda org, refreshing: Organization.update(
    dirty_since=refreshing).where(Organization.id == org))
_SETTLE_DIRTY = compiled.Compiled(lambda org, refreshing: Organization.update(dirty_since=None)
                                  .where(Organization.id == org,
                                         Organization.dirty_since == refreshing))
_DIRTY = compiled.Compiled(lambda: Organization.select(Organization.id)
                           .where(Organization.dirty_since.is_null(False))
                           .order_by(Organization.dirty_since, Organization.id))
