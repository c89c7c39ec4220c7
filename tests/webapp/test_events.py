"""GET /events: the feed newest first, day and handled filters, paging, fields and errors."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from store import events
from store.models import Event
from tests.factories import make_key, make_org
from tests.webapp.helpers import assert_error, get

START = datetime(2024, 3, 1, 9, 30, 0)


@pytest.fixture
def feed(org):
    """Five events a day apart (2024-03-01 .. 03-05): the 2nd acknowledged, the 3rd cleared."""
    ids = []
    for n in range(5):
        events.raise_event(org.id, "compliance_drop" if n % 2 else "quota_near_cap",
                           f"key-{n}",
                           title=f"event {n}", detail=f"detail {n}",
                           domain="example.com" if n % 2 else "",
                           link="/domains/example.com/health" if n % 2 else None,
                           now=START + timedelta(days=n))
        ids.append(Event.get(Event.dedupe_key == f"key-{n}").id)
    Event.update(acknowledged=True).where(Event.id == ids[1]).execute()
    events.clear(org.id, ["key-2"], START + timedelta(days=6))
    events.raise_event(make_org().id, "no_reports", "other", title="theirs")
    return ids


def titles(client, key, query=""):
    resp = get(client, "/events" + query, key)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return [e["title"] for e in resp.get_json()["events"]]


def test_the_feed_is_newest_first_with_the_contracts_fields(client, key, feed):
    body = get(client, "/events", key).get_json()
    assert (body["total"], body["limit"], body["offset"]) == (5, 50, 0)
    assert [e["id"] for e in body["events"]] == feed[::-1]
    assert body["events"][1] == {
        "id": feed[3], "type": "compliance_drop", "type_label": "Compliance dropped",
        "severity": "warning", "title": "event 3", "detail": "detail 3", "domain": "example.com",
        "link": "/domains/example.com/health", "acknowledged": False,
        "created_at": "2024-03-04T09:30:00Z"}
    assert body["events"][0]["domain"] == "" and body["events"][0]["link"] is None


@pytest.mark.parametrize("query, expected", [
    ("?acknowledged=false", ["event 4", "event 3", "event 0"]),
    ("?acknowledged=true", ["event 2", "event 1"]),      # acknowledged, or its condition cleared
    ("?acknowledged=maybe", ["event 4", "event 3", "event 2", "event 1", "event 0"]),
    ("?from=2024-03-02&to=2024-03-04", ["event 3", "event 2", "event 1"]),
    ("?from=2024-03-05", ["event 4"]),
    ("?to=2024-03-01", ["event 0"]),
    ("?from=2024-03-06", []),
    ("?from=2024-03-02&acknowledged=false", ["event 4", "event 3"]),
])
def test_filters(client, key, feed, query, expected):
    assert titles(client, key, query) == expected


def test_paging_keeps_the_order_and_counts_the_matches(client, key, feed):
    body = get(client, "/events?limit=2&offset=1", key).get_json()
    assert [e["title"] for e in body["events"]] == ["event 3", "event 2"]
    assert (body["total"], body["limit"], body["offset"]) == (5, 2, 1)
    past = get(client, "/events?offset=10", key).get_json()
    assert (past["events"], past["total"], past["offset"]) == ([], 5, 10)


def test_ties_on_created_at_are_broken_by_id(client, key, org):
    for n in range(3):
        events.raise_event(org.id, "new_sender", f"same-{n}", title=f"s{n}",
                           now=START)
    ids = [e["id"] for e in get(client, "/events", key).get_json()["events"]]
    assert ids == sorted(ids, reverse=True)


def test_an_organization_without_events_gets_an_empty_list(client, key):
    assert get(client, "/events", key).get_json() == {"events": [], "total": 0, "limit": 50,
                                                      "offset": 0}


@pytest.mark.parametrize("query", ["?from=2024-02-30", "?to=20240105", "?from=yesterday"])
def test_a_bad_date_is_400_invalid_date(client, key, query):
    assert_error(get(client, "/events" + query, key), 400, "invalid_date")


def test_events_need_alert_read(client, org):
    _, billing = make_key(org, role="billing")
    assert_error(get(client, "/events", billing), 403, "insufficient_permission",
                 required="alert:read")
