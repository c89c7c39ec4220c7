"""`rua event list|ack`: the organization's events with their state, and acknowledging one."""
from __future__ import annotations

import json
from datetime import datetime, timedelta

from store import events
from store.models import Event, Organization
from tests.cli.outcome import assert_refused, ok
from tests.factories import make_org

NOW = datetime(2026, 3, 1, 12, 0, 0)


def feed(org):
    for n, key in enumerate(("a", "b", "c")):
        events.raise_event(org.id, "no_reports", f"no_reports:{key}.example",
                           title=f"No reports for {key}.example", domain=f"{key}.example",
                           now=NOW + timedelta(hours=n))
    events.clear(org.id, ["no_reports:a.example"], NOW + timedelta(days=1))
    return {e.domain: e.id for e in Event.select()}


def test_event_list_shows_every_event_newest_first_with_its_state(rua, acme):
    ids = feed(acme)
    assert ok(rua("event", "list", "Acme")) == [
        f"{ids['c.example']}  2026-03-01T14:00:00Z  warning   open          no_reports "
        "c.example: No reports for c.example",
        f"{ids['b.example']}  2026-03-01T13:00:00Z  warning   open          no_reports "
        "b.example: No reports for b.example",
        f"{ids['a.example']}  2026-03-01T12:00:00Z  warning   cleared       no_reports "
        "a.example: No reports for a.example"]


def test_event_list_open_in_json_and_ack_takes_one_out(rua, acme):
    ids = feed(acme)
    lines = [json.loads(line) for line in ok(rua("event", "list", acme.id, "--open",
                                                 "--format", "json"))]
    assert [line["domain"] for line in lines] == ["c.example", "b.example"]
    assert lines[0] == {"id": ids["c.example"], "type": "no_reports",
                        "type_label": "No reports received", "severity": "warning",
                        "title": "No reports for c.example", "detail": "",
                        "domain": "c.example", "link": None, "acknowledged": False, "state": "open",
                        "created_at": "2026-03-01T14:00:00Z", "cleared_at": None}
    Organization.update(dirty_since=None).execute()
    assert ok(rua("event", "ack", ids["c.example"].lower())) == [
        f"acknowledged {ids['c.example']}: No reports for c.example"]
    assert Organization.get_by_id(acme.id).dirty_since is not None
    assert [json.loads(line)["domain"] for line in
            ok(rua("event", "list", "Acme", "--open", "--format", "json"))] == ["b.example"]
    assert "acknowledged" in ok(rua("event", "list", "Acme"))[0]


def test_an_organization_without_open_events_says_so(rua, acme):
    make_org("Other")
    assert ok(rua("event", "list", "Acme", "--open")) == ["no open events for Acme"]
    assert ok(rua("event", "list", "Acme", "--format", "json")) == []


def test_bad_input_is_one_clear_line(rua, acme):
    assert_refused(rua("event", "ack", "nope"), "'nope' is not an event id")
    assert_refused(rua("event", "ack", "01HZX3Q9V2K8M4N6P7R8S9T0VW"), "no event with id")
    assert_refused(rua("event", "list", "Nobody"), "no organization 'Nobody'")
    assert_refused(rua("event", "list", "Acme", "--format", "xml"), "unknown format 'xml'")
