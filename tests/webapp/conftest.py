"""Webapp fixtures: an app on the test's store, a client, an organization and its key."""
from __future__ import annotations

import logging
import re

import pytest

import store
from store.clock import utcnow
from tests.factories import make_key, make_org
from webapp import create_app


class Clock:
    """The app's clock: real time until a test sets `now`."""

    def __init__(self):
        self.now = None

    def __call__(self):
        return self.now or utcnow()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def app(config, database, clock):
    app = create_app(config, clock=clock)
    # create_app points the store at its own database; the test's factories share its connection.
    with store.db.obj.connection_context():
        yield app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def org(app):
    return make_org(name="Example Org", plan="team")


@pytest.fixture
def key(org):
    """The plaintext of a read key of the org's owner."""
    return make_key(org, scope="read", role="owner")[1]


# The request checks' fixed statements: metering's and the key look-up (with its last_used_at).
METERING = re.compile(r'\b(INTO|UPDATE|FROM) "?(usage|api_key)\b|^SET LOCAL |\brua_(admit|key_by_digest)\b')


class QueryCounter(logging.Handler):
    """Counts SQL statements peewee runs (it logs each one to the "peewee" logger)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record):
        # Not peewee.pool's connection notes, nor metering's fixed statements on its own two
        # tables (tests/webapp/test_quota.py counts those): what is left is the view's work.
        if record.name == "peewee" and not METERING.search(str(record.msg[0])):
            self.count += 1


@pytest.fixture
def count_queries():
    logger = logging.getLogger("peewee")
    counter, level = QueryCounter(), logger.level
    logger.addHandler(counter)
    logger.setLevel(logging.DEBUG)
    yield counter
    logger.removeHandler(counter)
    logger.setLevel(level)
