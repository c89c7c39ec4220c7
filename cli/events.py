"""`rua event list|ack`: an organization's attention feed, and marking an event handled."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cli.common import fail
from cli.lookup import resolve_org
from cli.options import OneOf
from cli.session import open_store
from store.clock import rfc3339
from store.encoding import dumps
from store.ids import normalize_ulid

if TYPE_CHECKING:
    from store import event_queries

PAGE = 500


@click.group()
def event():
    """Events raised for an organization (the /events feed); acknowledging happens here."""


def _state(row: event_queries.EventRow) -> str:
    if row.acknowledged:
        return "acknowledged"
    if row.cleared_at:
        return "cleared"
    return "open"


def _object(row: event_queries.EventRow) -> dict:
    """The event as /events shows it, with its state and when its condition cleared."""
    from store import event_queries
    return {**event_queries.shape(row), "state": _state(row), "cleared_at": row.cleared_at}


@event.command("list")
@click.argument("org_ref", metavar="ORG")
@click.option("--open", "only_open", is_flag=True,
              help="Only open events: neither acknowledged nor cleared.")
@click.option("--format", "shape", type=OneOf(("text", "json"), "format"), default="text",
              show_default=True, help="json: one object per event per line.")
@click.pass_obj
def event_list(config, org_ref, only_open, shape):
    """List the events of ORG (id or name), newest first, with their state: open,
    acknowledged, or cleared (the condition went away)."""
    from store import event_queries
    wanted = event_queries.EventFilter(handled=False if only_open else None)
    with open_store(config):
        org = resolve_org(org_ref)
        rows, offset = [], 0
        while batch := event_queries.page(org.id, wanted, PAGE, offset):
            rows += batch
            offset += len(batch)
    found = [_object(row) for row in rows]
    if shape == "json":
        for item in found:
            click.echo(dumps(item).decode())
        return
    if not found:
        click.echo(f"no {'open ' if only_open else ''}events for {org.name}")
        return
    for item in found:
        where = f" {item['domain']}" if item["domain"] else ""
        click.echo(f"{item['id']}  {rfc3339(item['created_at'])}  {item['severity']:<8}  "
                   f"{item['state']:<12}  {item['type']}{where}: {item['title']}")


@event.command("ack")
@click.argument("event_id", metavar="EVENT_ID")
@click.pass_obj
def event_ack(config, event_id):
    """Mark EVENT_ID handled: it leaves the action items and shows acknowledged in /events."""
    from store import events
    ulid = normalize_ulid(event_id.strip())
    if ulid is None:
        fail(f"{event_id!r} is not an event id (`rua event list ORG` shows them)")
    with open_store(config):
        found = events.acknowledge(ulid)
    if found is None:
        fail(f"no event with id {event_id!r} (`rua event list ORG` shows the ids)")
    click.echo(f"acknowledged {found.id}: {found.title}")
