"""Raising and clearing conditions: one open event per dedupe key, even under concurrent raisers."""
from __future__ import annotations

import datetime
import logging
import multiprocessing
from concurrent.futures import ThreadPoolExecutor

import pytest
from peewee import OperationalError

from store import db, event_queries, events, is_postgres, migrations, open_db
from store.migrations import migrate
from store.models import Event, Organization
from tests.factories import make_org
from tests.store.scratch import empty_database_url

NOW = datetime.datetime(2026, 3, 1, 12, 0, 0)
LATER = NOW + datetime.timedelta(hours=1)


def raise_missing(org_id, now=NOW, domain="example.com"):
    return events.raise_event(org_id, "dns_record_missing", f"dns_record_missing:{domain}:spf",
                              title=f"SPF record of {domain} is missing",
                              detail="Publish one.", domain=domain, now=now)


def open_events(org_id):
    return list(Event.select().where(Event.org == org_id, Event.cleared_at.is_null()))


def test_a_condition_is_raised_once_until_it_clears_then_may_be_raised_again(database):
    org = make_org()
    assert raise_missing(org.id) is True
    assert raise_missing(org.id, LATER) is False
    [event] = open_events(org.id)
    assert (event.type, event.severity, event.domain, event.created_at) == (
        "dns_record_missing", "critical", "example.com", NOW)
    assert events.clear(org.id, ["dns_record_missing:example.com:spf"], LATER) == 1
    assert open_events(org.id) == []
    assert Event.get_by_id(event.id).cleared_at == LATER
    assert raise_missing(org.id, LATER) is True
    assert Event.select().where(Event.org == org.id).count() == 2


def test_clearing_a_condition_that_is_not_open_changes_nothing(database):
    org = make_org()
    assert events.clear(org.id, ["dns_record_missing:example.com:spf"], NOW) == 0
    assert events.clear(org.id, [], NOW) == 0
    assert Organization.get_by_id(org.id).dirty_since is None


def test_the_same_key_in_two_organizations_is_two_conditions(database):
    first, second = make_org(), make_org()
    assert raise_missing(first.id) and raise_missing(second.id)


def test_raising_and_clearing_mark_the_organization_for_the_snapshotter(database):
    org = make_org()
    raise_missing(org.id)
    assert Organization.get_by_id(org.id).dirty_since == NOW
    Organization.update(dirty_since=None).execute()
    raise_missing(org.id, LATER)           # already open: nothing new to show
    assert Organization.get_by_id(org.id).dirty_since is None
    events.clear(org.id, ["dns_record_missing:example.com:spf"], LATER)
    assert Organization.get_by_id(org.id).dirty_since == LATER


def test_taking_the_mark_waits_for_a_transaction_that_marked_the_organization(database):
    # A refresh reads the store after taking the mark: a report's transaction that marked an
    # organization marked already must have committed by then, or the refresh misses it.
    org = make_org()
    events.mark_dirty(org.id, NOW)
    with database.atomic():
        events.mark_dirty(org.id, LATER)           # the last write of a report's transaction
        with pytest.raises(OperationalError):
            in_another_connection(lambda: events.take_dirty(org.id))
    assert events.take_dirty(org.id) == NOW
    events.settle_dirty(org.id)
    assert events.take_dirty(org.id) is None
    assert events.dirty_orgs() == []


def test_a_change_marked_during_a_refresh_keeps_the_organization_dirty_after_it(database):
    org = make_org()
    events.mark_dirty(org.id, NOW)
    assert events.take_dirty(org.id) == NOW
    events.mark_dirty(org.id, LATER)             # a report stored while the refresh computes
    events.settle_dirty(org.id)
    assert Organization.get_by_id(org.id).dirty_since == LATER


def test_a_refresh_with_nothing_marked_meanwhile_leaves_the_organization_clean(database):
    org = make_org()
    events.mark_dirty(org.id, NOW)
    events.take_dirty(org.id)
    assert Organization.get_by_id(org.id).dirty_since == events.REFRESHING
    events.settle_dirty(org.id)
    assert Organization.get_by_id(org.id).dirty_since is None


def in_another_connection(work):
    """work() on a connection of its own (another thread's) that waits 0.2 s for a lock."""
    def run():
        with db.connection_context(), db.atomic():
            if is_postgres():
                db.execute_sql("SET LOCAL lock_timeout = '200ms'")
            else:
                db.execute_sql("PRAGMA busy_timeout = 200")
            return work()
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(run).result()


def test_marked_organizations_are_listed_oldest_mark_first(database):
    first, second, clean = make_org(), make_org(), make_org()
    events.mark_dirty(second.id, LATER)
    events.mark_dirty(first.id, NOW)
    events.mark_dirty(second.id, LATER + datetime.timedelta(hours=1))     # the earliest stays
    assert events.dirty_orgs() == [first.id, second.id]
    assert Organization.get_by_id(second.id).dirty_since == LATER


def test_open_keys_match_the_prefix_literally(database):
    org = make_org()
    raise_missing(org.id)
    raise_missing(org.id, domain="other.example")
    events.raise_event(org.id, "new_sender", "dnsXrecord_missing:example.com",
                       title="t", now=NOW)
    assert events.open_keys(org.id, "dns_record_missing:example.com:") == {
        "dns_record_missing:example.com:spf"}


def _race(url: str, org_id: str, start, queue) -> None:
    database = open_db(url)
    with database.connection_context():
        start.wait(timeout=30)
        queue.put([raise_missing(org_id) for _ in range(20)])


def test_concurrent_raisers_open_one_event_between_them(database, config):
    org = make_org()
    context = multiprocessing.get_context("spawn")
    queue, start = context.Queue(), context.Barrier(3)
    workers = [context.Process(target=_race, args=(config.database_url, org.id, start, queue))
               for _ in range(3)]
    for worker in workers:
        worker.start()
    opened = [o for _ in workers for o in queue.get(timeout=60)]
    for worker in workers:
        worker.join(timeout=10)
    assert opened.count(True) == 1 and len(opened) == 60
    assert len(open_events(org.id)) == 1


def test_conditions_raised_together_are_written_in_key_order(database, caplog):
    """Two transactions raising the same conditions wait for each other in one order, never
    in a circle (which Postgres would end by refusing one of them)."""
    org = make_org()
    keys = ["new_sender:example.com:203.0.113.9", "new_sender:example.com:192.0.2.1"]
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        events.raise_events(org.id, "new_sender", [{"dedupe_key": k, "title": "New sender"} for k in keys])
    insert = next(r.msg for r in caplog.records if isinstance(r.msg, tuple)
                  and r.msg[0].startswith("INSERT") and 'INTO "event"' in r.msg[0])
    assert [p for p in insert[1] if p in keys] == sorted(keys)


def test_migration_5_closes_duplicate_open_events_keeping_the_oldest(tmp_path, monkeypatch):
    with empty_database_url(tmp_path) as url:
        database = open_db(url)
        with database.connection_context():
            with monkeypatch.context() as patch:
                patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:4])
                migrate(database)
            database.execute_sql('DROP INDEX "event_open_org_dedupe_key"')   # as version 4 had
            org = make_org()
            for at in (NOW, LATER):
                Event.create(org=org, type="quota_near_cap", severity="warning", title="t",
                             dedupe_key="quota_near_cap:1", created_at=at)
            assert [v for v, _ in migrate(database)][0] == 5
            [kept] = open_events(org.id)
            assert kept.created_at == NOW
            assert raise_missing(org.id) and not raise_missing(org.id)
        if hasattr(database, "close_all"):
            database.close_all()


@pytest.mark.parametrize("title_length", [300])
def test_a_long_title_is_cut_to_the_column(database, title_length):
    org = make_org()
    events.raise_event(org.id, "policy_changed", "policy_changed:example.com",
                       title="x" * title_length, now=NOW)
    assert len(open_events(org.id)[0].title) == 255


def test_a_refresh_that_shows_its_own_changes_can_leave_the_organization_clean(database):
    org = make_org()
    assert events.raise_event(org.id, "no_reports", "no_reports:example.com",
                              title="t", now=NOW, mark=False)
    assert events.clear(org.id, ["no_reports:example.com"], LATER, mark=False) == 1
    assert Organization.get_by_id(org.id).dirty_since is None


def test_acknowledging_marks_the_event_handled_once_and_the_organization_dirty(database):
    org = make_org()
    raise_missing(org.id)
    [event] = open_events(org.id)
    Organization.update(dirty_since=None).execute()
    assert events.acknowledge(event.id, LATER).acknowledged is True
    assert Event.get_by_id(event.id).acknowledged is True
    assert Organization.get_by_id(org.id).dirty_since == LATER
    Organization.update(dirty_since=None).execute()
    assert events.acknowledge(event.id, LATER).acknowledged is True     # again: nothing changes
    assert Organization.get_by_id(org.id).dirty_since is None
    assert events.acknowledge("01HZX3Q9V2K8M4N6P7R8S9T0VW") is None


def test_the_feed_query_reads_days_inclusively_and_handled_as_acknowledged_or_cleared(database):
    org = make_org()
    for n in range(3):
        events.raise_event(org.id, "new_sender", f"k{n}", title=f"t{n}",
                           now=NOW + datetime.timedelta(days=n, hours=11))
    events.clear(org.id, ["k0"], LATER)
    wanted = event_queries.EventFilter(first=NOW.date(), last=NOW.date()
                                       + datetime.timedelta(days=1))
    assert [r[3] for r in event_queries.page(org.id, wanted, 10, 0)] == ["t1", "t0"]
    handled = event_queries.EventFilter(handled=True)
    assert event_queries.count(org.id, handled) == 1
    assert event_queries.count(org.id, event_queries.EventFilter(handled=False)) == 2


def test_one_shape_for_every_reader_counts_a_cleared_event_as_handled(database):
    from notify.message import event_fields
    from store.event_queries import EventFilter, page, shape
    org = make_org()
    raise_missing(org.id)
    events.clear(org.id, ["dns_record_missing:example.com:spf"], NOW)
    [row] = page(org.id, EventFilter(), 10, 0)
    stored = Event.get_by_id(row.id)
    assert shape(row) == shape(stored) and shape(row)["acknowledged"] is True
    assert event_fields(stored, "Acme") == {**shape(row), "organization": "Acme"}
