"""The store's data version: what may be reused between requests, and for how long."""
from __future__ import annotations

import sqlite3

import pytest

from store.models import Organization
from store.versioned import VersionCache, data_version
from tests.factories import make_org


@pytest.fixture
def sqlite_path(database, config):
    if not config.is_sqlite:
        pytest.skip("Postgres gives no data version")
    return config.database_url[len("sqlite:///"):]


def test_the_version_holds_while_nobody_writes(database, sqlite_path):
    make_org()
    assert data_version(database) == data_version(database)


def test_another_connections_commit_moves_the_version(database, sqlite_path):
    before = data_version(database)
    other = sqlite3.connect(sqlite_path, isolation_level=None)
    other.execute("UPDATE organization SET plan = 'team'")
    other.execute("INSERT INTO schema_version VALUES (99, 'probe', '2026-01-01 00:00:00')")
    other.close()
    assert data_version(database) != before


def test_a_write_of_this_connection_moves_the_version(database, sqlite_path):
    before = data_version(database)
    make_org()
    assert data_version(database) != before


def test_postgres_gives_no_version(database, config):
    if config.is_sqlite:
        pytest.skip("SQLite gives one")
    assert data_version(database) is None


def test_kept_values_are_dropped_when_the_version_moves(database, sqlite_path):
    kept = VersionCache()
    kept.values(data_version(database))["k"] = 1
    assert kept.values(data_version(database)) == {"k": 1}
    Organization.create(name="Another")
    assert kept.values(data_version(database)) == {}


def test_nothing_is_kept_without_a_version():
    assert VersionCache().values(None) is None


def test_a_full_cache_starts_again_empty():
    kept = VersionCache(size=2)
    kept.values("v").update(a=1, b=2)
    assert kept.values("v") == {}
