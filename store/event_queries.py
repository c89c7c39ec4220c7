"""Read queries over an organization's events: the /events feed and `rua event list`.

An event is handled (`acknowledged` on the wire) once someone acknowledged it in the app or its
condition cleared; open means neither. The feed reads the (org, created_at, id) index newest
first and filters the rest row by row.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import NamedTuple

from store.event_types import LABELS
from store.models import Event

FIELDS = (Event.id, Event.type, Event.severity, Event.title, Event.detail, Event.domain,
          Event.link, Event.acknowledged, Event.cleared_at, Event.created_at)


class EventRow(NamedTuple):
    """A row of FIELDS."""
    id: str
    type: str
    severity: str
    title: str
    detail: str
    domain: str
    link: str | None
    acknowledged: bool
    cleared_at: datetime | None
    created_at: datetime


def shape(event) -> dict:
    """The event as /events shows it (the contract); webhooks, e-mail and `rua event list` add
    fields to this, never change one. `event`: an EventRow or an Event; handled (acknowledged
    on the wire) once acknowledged or its condition cleared."""
    return {"id": event.id, "type": event.type, "type_label": LABELS.get(event.type, event.type),
            "severity": event.severity, "title": event.title, "detail": event.detail,
            "domain": event.domain, "link": event.link,
            "acknowledged": bool(event.acknowledged) or event.cleared_at is not None,
            "created_at": event.created_at}


@dataclass(frozen=True)
class EventFilter:
    first: date | None = None        # created on or after this UTC day
    last: date | None = None         # created on or before this UTC day
    handled: bool | None = None      # True handled only, False open only, None both


def _where(org_id: str, wanted: EventFilter):
    condition = Event.org == org_id
    if wanted.first is not None:
        condition &= Event.created_at >= datetime.combine(wanted.first, time())
    if wanted.last is not None:
        condition &= Event.created_at < datetime.combine(wanted.last + timedelta(days=1), time())
    is_open = (Event.acknowledged == False) & Event.cleared_at.is_null()  # noqa: E712 (SQL)
    if wanted.handled is True:
        condition &= ~is_open
    elif wanted.handled is False:
        condition &= is_open
    return condition


def page(org_id: str, wanted: EventFilter, limit: int, offset: int) -> list[EventRow]:
    """The matching events, newest first (id breaks ties)."""
    rows = (Event.select(*FIELDS).where(_where(org_id, wanted))
            .order_by(Event.created_at.desc(), Event.id.desc())
            .limit(limit).offset(offset).tuples())
    return [EventRow._make(row) for row in rows]


def count(org_id: str, wanted: EventFilter) -> int:
    return Event.select().where(_where(org_id, wanted)).count()
