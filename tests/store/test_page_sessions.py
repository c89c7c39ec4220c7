"""The pages' sign-in sessions: kept by their token's digest, with their key, until ended."""
from __future__ import annotations

from datetime import datetime, timedelta

from store import page_sessions
from store.migrations import migrate
from store.models import PageSession
from tests.factories import make_key, make_org
from tests.store.test_models import empty_database, migrate_up_to  # noqa: F401 - the fixture

NOW = datetime(2026, 3, 31, 12, 0, 0)


def test_a_session_is_found_by_its_token_with_its_keys_row(database):
    key = make_key(make_org(plan="team"), role="analyst")[0]
    token = page_sessions.new_token()
    page_sessions.start(key.id, token, NOW)
    found = page_sessions.find(token)
    assert found.digest == page_sessions.digest(token) != token
    assert found.last_seen_at == NOW
    key_id, org_id, _member, scope, expires_at, revoked_at, _used, role, plan = found.key_row
    assert (key_id, org_id, scope, role, plan) == (key.id, key.org_id, "read", "analyst", "team")
    assert expires_at is None and revoked_at is None
    assert page_sessions.find(page_sessions.new_token()) is None


def test_the_last_view_is_written_at_most_once_per_interval(database):
    key = make_key(make_org())[0]
    token = page_sessions.new_token()
    page_sessions.start(key.id, token, NOW)
    every = timedelta(minutes=1)
    page_sessions.touch(page_sessions.digest(token), NOW + timedelta(seconds=30), every)
    assert page_sessions.find(token).last_seen_at == NOW
    page_sessions.touch(page_sessions.digest(token), NOW + timedelta(seconds=90), every)
    assert page_sessions.find(token).last_seen_at == NOW + timedelta(seconds=90)


def test_ending_sessions_one_or_the_idle_ones(database):
    key = make_key(make_org())[0]
    old, new, gone = (page_sessions.new_token() for _ in range(3))
    page_sessions.start(key.id, old, NOW - timedelta(hours=3))
    page_sessions.start(key.id, new, NOW)
    page_sessions.start(key.id, gone, NOW)
    page_sessions.end(page_sessions.digest(gone))
    assert page_sessions.end_idle(NOW - timedelta(hours=1)) == 1
    assert [row.digest for row in PageSession.select()] == [page_sessions.digest(new)]


def test_a_deleted_key_takes_its_sessions_with_it(database):
    key = make_key(make_org())[0]
    page_sessions.start(key.id, page_sessions.new_token(), NOW)
    key.delete_instance()
    assert PageSession.select().count() == 0


def test_a_store_made_before_version_17_gains_the_sessions_table(empty_database, monkeypatch):  # noqa: F811
    migrate_up_to(empty_database, 15, monkeypatch)
    empty_database.execute_sql('DROP TABLE "page_session"')     # version 1 makes today's tables
    assert (17, "the pages' sign-in sessions") in migrate(empty_database)
    assert "page_session" in empty_database.get_tables()
