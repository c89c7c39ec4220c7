"""bench/api_apps.py's metered floor keys and counts a request as rua does, so the floor
bench/api_postgres.py sets beside rua's routes costs what exact metering costs."""
from __future__ import annotations

from datetime import datetime

import pytest

import store
from bench.api_apps import BODY, metered_app
from store import usage
from store.clock import to_epoch
from tests.factories import make_key, make_org

NOON = datetime(2025, 6, 1, 12, 0, 0)


@pytest.fixture
def client(config, database):
    app = metered_app(config, clock=lambda: NOON)
    # metered_app points the store at its own database; the factories share its connection.
    with store.db.obj.connection_context():
        yield app.test_client()


def get(client, key: str | None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.get("/constant", headers=headers)


def test_a_keyed_request_gets_the_constant_body_and_is_counted(client):
    _, key = make_key(make_org(plan="free"))
    first, second = get(client, key), get(client, key)
    assert first.status_code == 200 and first.get_data() == BODY
    assert first.headers["X-RateLimit-Remaining"] == "999"
    assert second.headers["X-RateLimit-Remaining"] == "998"


def test_a_request_without_a_key_is_refused_and_not_counted(client):
    org = make_org(plan="free")
    response = get(client, None)
    assert response.status_code == 401 and response.json["code"] == "missing_key"
    assert usage.hour_counts(org.id, usage.hour_of(to_epoch(NOON))) == (0, 0, 0)


def test_the_abuse_window_refuses_the_51st_request_of_a_key_in_a_second(client):
    _, key = make_key(make_org(plan="unlimited"))
    answers = [get(client, key).status_code for _ in range(51)]
    assert answers == [200] * 50 + [429]
