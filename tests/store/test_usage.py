"""Metering in the store: conditional increments that never admit one too many."""
from __future__ import annotations

import multiprocessing

import pytest

from store import open_db, usage, usage_sql
from store.models import Event, Usage
from store.compiled import run_named
from tests.factories import make_key, make_org

HOUR = 1_700_002_800          # an epoch second at the top of an hour
NO_ABUSE = usage.Abuse(limit=63)   # the most the window holds: out of these tests' way


def admit(key, now=HOUR, limit=5, heavy_limit=2, heavy=False, abuse=NO_ABUSE):
    return usage.admit(key.org_id, key.id, now, limit=limit, heavy_limit=heavy_limit,
                       heavy=heavy, abuse=abuse)


@pytest.fixture
def key(database):
    return make_key(make_org())[0]


@pytest.mark.parametrize("epoch, hour", [(HOUR, HOUR), (HOUR + 1, HOUR), (HOUR + 3599, HOUR),
                                         (HOUR + 3600, HOUR + 3600)])
def test_hour_of_is_the_start_of_the_utc_clock_hour(epoch, hour):
    assert usage.hour_of(epoch) == hour


@pytest.mark.parametrize("hits, wait", [
    ([(100, 50)], 10),                        # all fifty in the current second
    ([(91, 50)], 1),                          # all in the oldest second of the window
    ([(91, 10), (95, 30), (100, 10)], 1),     # 40 left after one second: room again
    ([(95, 49), (96, 1)], 5),                # must wait until second 95 leaves the window
])
def test_abuse_wait_is_the_time_until_the_window_has_room(hits, wait):
    assert usage.abuse_wait(hits, 100, usage.Abuse()) == wait


def test_requests_are_allowed_until_the_limit_then_refused_as_quota(key):
    tallies = [admit(key, now=HOUR + i) for i in range(7)]
    assert [t.outcome for t in tallies] == ["allowed"] * 5 + ["quota"] * 2
    assert [t.used for t in tallies] == [1, 2, 3, 4, 5, 5, 5]
    assert tallies[-1].retry_after == 3600 - 6
    assert usage.hour_counts(key.org_id, HOUR) == (5, 2, 0)


def test_each_key_row_counts_allowed_and_rejected_and_the_organization_hour_is_their_sum(key):
    other = make_key(key.org)[0]
    for i in range(4):
        admit(key, limit=6)
        admit(other, limit=6)
    assert usage.hour_counts(key.org_id, HOUR) == (6, 2, 0)
    assert usage.per_key(key.org_id, HOUR, HOUR) == {key.id: (3, 1, HOUR), other.id: (3, 1, HOUR)}


def test_sqlite_settles_a_refusal_by_asking_again_under_the_write_lock(key, config):
    """Between the one statement that refused and the settling transaction, room can only
    appear if rows went away; the request is then admitted, not counted as refused."""
    if not config.is_sqlite:
        pytest.skip("Postgres meters through the organization's row")
    params = {"org": key.org_id, "key": key.id, "now": HOUR, "abuse": 50, "hour": HOUR,
              "weight": 0, "counted": 1, "limit": 5, "heavy_limit": 2}
    with usage._writing(usage.meter):
        tally = usage._sqlite_refusal(params, NO_ABUSE)
    assert (tally.outcome, tally.used) == ("allowed", 1)
    assert usage.hour_counts(key.org_id, HOUR) == (1, 0, 0)


def test_a_new_clock_hour_starts_from_zero(key):
    for _ in range(6):
        admit(key, now=HOUR + 3599)
    assert admit(key, now=HOUR + 3599).outcome == "quota"
    assert admit(key, now=HOUR + 3600).used == 1
    assert usage.hourly(key.org_id, HOUR, HOUR + 3600) == {HOUR: (5, 2), HOUR + 3600: (1, 0)}


def test_heavy_budget_is_spent_separately_and_costs_one_of_the_hour(key):
    outcomes = [admit(key, heavy=True).outcome for _ in range(3)]
    assert outcomes == ["allowed", "allowed", "heavy"]
    light = admit(key)
    assert (light.outcome, light.used, light.heavy_used) == ("allowed", 3, 2)
    assert usage.hour_counts(key.org_id, HOUR) == (3, 1, 2)


def test_a_spent_hour_refuses_heavy_requests_as_quota(key):
    for _ in range(5):
        admit(key)
    assert admit(key, heavy=True).outcome == "quota"


def test_uncapped_plans_are_counted_and_never_refused(key):
    tallies = [admit(key, limit=None, heavy_limit=None, heavy=True) for _ in range(20)]
    assert {t.outcome for t in tallies} == {"allowed"}
    assert usage.hour_counts(key.org_id, HOUR) == (20, 0, 20)


def test_abuse_control_refuses_request_51_within_ten_seconds(key):
    abuse = usage.Abuse()
    outcomes = [admit(key, now=HOUR + i // 10, limit=1000, abuse=abuse).outcome for i in range(51)]
    assert outcomes == ["allowed"] * 50 + ["abuse"]
    refused = admit(key, now=HOUR + 5, limit=1000, abuse=abuse)
    assert (refused.outcome, refused.retry_after) == ("abuse", 5)
    assert usage.hour_counts(key.org_id, HOUR) == (50, 2, 0)


def test_abuse_window_slides_and_refusals_do_not_extend_it(key):
    abuse = usage.Abuse()
    for _ in range(50):
        admit(key, now=HOUR, limit=1000, abuse=abuse)
    for second in range(1, 10):
        assert admit(key, now=HOUR + second, limit=1000, abuse=abuse).outcome == "abuse"
    assert admit(key, now=HOUR + 10, limit=1000, abuse=abuse).outcome == "allowed"


def test_quota_refusals_do_not_fill_the_abuse_window(key):
    abuse = usage.Abuse()
    for _ in range(5):
        admit(key, abuse=abuse)
    outcomes = {admit(key, abuse=abuse).outcome for _ in range(60)}
    assert outcomes == {"quota"}


def test_peek_applies_the_abuse_control_without_counting_usage(key):
    abuse = usage.Abuse()
    admit(key)
    tallies = [usage.peek(key.org_id, key.id, HOUR + 20, abuse=abuse) for _ in range(50)]
    assert {(t.outcome, t.used) for t in tallies} == {("allowed", 1)}
    assert usage.peek(key.org_id, key.id, HOUR + 20, abuse=abuse).outcome == "abuse"
    assert usage.hour_counts(key.org_id, HOUR) == (1, 0, 0)


def _ring(key, hour=HOUR):
    row = Usage.get((Usage.key_id == key.id) & (Usage.hour == hour))
    return usage_sql.unpack(row.newest, row.ring)


def test_the_key_hour_row_holds_the_abuse_window_of_its_last_ten_seconds(key):
    for second in range(15):
        admit(key, now=HOUR + second, limit=1000)
        admit(key, now=HOUR + second, limit=1000)
    assert _ring(key) == [(HOUR + s, 2) for s in range(14, 4, -1)]


def test_the_abuse_window_reaches_back_into_the_previous_hour(key):
    abuse = usage.Abuse()
    for second in range(5, 0, -1):
        for _ in range(10):
            admit(key, now=HOUR - second, limit=1000, abuse=abuse)
    assert admit(key, now=HOUR + 4, limit=1000, abuse=abuse).outcome == "abuse"
    refused = admit(key, now=HOUR + 4, limit=1000, abuse=abuse)
    assert refused.retry_after == 1            # at HOUR + 5 the second HOUR - 5 has left
    assert admit(key, now=HOUR + 5, limit=1000, abuse=abuse).outcome == "allowed"
    assert usage.per_key(key.org_id, HOUR, HOUR)[key.id][:2] == (1, 2)


@pytest.mark.parametrize("newest, ring, fields", [
    (100, 0, []),
    (100, 1, [(100, 1)]),
    (100, (50 << 54) | 3, [(100, 3), (91, 50)]),
    (100, (63 << 6), [(99, 63)]),
])
def test_a_ring_unpacks_into_its_seconds(newest, ring, fields):
    assert usage_sql.unpack(newest, ring) == fields


@pytest.mark.parametrize("fields", [
    {}, {0: 1}, {0: 63}, {9: 63}, {3: 40, 7: 23}, {k: 6 for k in range(10)} | {4: 9},
])
def test_the_window_sql_sums_the_fields_of_a_ring_up_to_the_largest_limit(database, fields):
    ring = sum(count << (usage_sql.BITS * k) for k, count in fields.items())
    sql = f"SELECT {usage_sql._window('r')} FROM (SELECT {ring} AS ring, 100 AS newest) r"
    assert run_named(database, sql, {"now": 100}).fetchone()[0] == sum(fields.values())


@pytest.mark.parametrize("limit", [0, 64, 10**6])
def test_the_abuse_limit_must_fit_the_ring(limit):
    with pytest.raises(ValueError):
        usage.Abuse(limit=limit)


def test_a_late_clock_counts_into_the_newest_second(key):
    admit(key, now=HOUR + 5)
    admit(key, now=HOUR + 3)
    assert _ring(key) == [(HOUR + 5, 2)]


def test_usage_older_than_the_chart_is_pruned(key):
    admit(key, now=HOUR - 93 * 24 * 3600)
    admit(key, now=HOUR)
    assert sorted({u.hour for u in Usage.select()}) == [HOUR]


def test_ever_metered_turns_true_with_the_first_request(key):
    assert not usage.ever_metered(key.org_id)
    admit(key)
    assert usage.ever_metered(key.org_id)


def test_near_cap_event_is_stored_once_per_hour(key):
    assert usage.record_near_cap(key.org_id, HOUR + 10, 1000)
    assert not usage.record_near_cap(key.org_id, HOUR + 20, 1000)
    assert usage.record_near_cap(key.org_id, HOUR + 3600, 1000)
    events = list(Event.select().order_by(Event.created_at))
    assert [(e.type, e.severity, e.domain) for e in events] == [("quota_near_cap", "warning", "")] * 2


def _hammer(url: str, org_id: str, key_ids: list[str], count: int, start, queue) -> None:
    database = open_db(url)
    with database.connection_context():
        start.wait(timeout=30)      # all processes connected: now they race
        outcomes = [usage.admit(org_id, key_ids[i % len(key_ids)], HOUR, limit=300,
                                heavy_limit=None, abuse=usage.Abuse(limit=60)).outcome
                    for i in range(count)]
    queue.put(outcomes)


def test_concurrent_processes_never_admit_more_than_the_limit(database, config):
    org = make_org()
    key_ids = [make_key(org)[0].id for _ in range(8)]
    context = multiprocessing.get_context("spawn")
    queue, start = context.Queue(), context.Barrier(4)
    workers = [context.Process(target=_hammer, args=(config.database_url, org.id, key_ids[i::4],
                                                     100, start, queue)) for i in range(4)]
    for worker in workers:
        worker.start()
    outcomes = [o for _ in workers for o in queue.get(timeout=60)]
    for worker in workers:
        worker.join(timeout=10)
    assert (outcomes.count("allowed"), outcomes.count("quota")) == (300, 100)
    assert usage.hour_counts(org.id, HOUR) == (300, 100, 0)
    assert sum(a for a, _r, _l in usage.per_key(org.id, HOUR, HOUR).values()) == 300


def test_metering_counters_locked_past_their_busy_timeout_raise_the_storage_error_and_leave_no_transaction(key, config):
    if not config.is_sqlite:
        pytest.skip("SQLite's write lock")
    import sqlite3

    import peewee

    from store import meter, meter_path
    meter.execute_sql("PRAGMA busy_timeout = 50")
    holder = sqlite3.connect(meter_path(config.database_url[len("sqlite:///"):]), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(peewee.OperationalError):     # the web layer answers it with 503
            admit(key)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not meter.connection().in_transaction
    assert admit(key).allowed and admit(key).used == 2


def test_metering_goes_on_while_a_long_write_holds_the_stores_own_file(key, config):
    if not config.is_sqlite:
        pytest.skip("SQLite's write lock")
    import sqlite3
    holder = sqlite3.connect(config.database_url[len("sqlite:///"):], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")           # as an ingest transaction does
    try:
        assert admit(key).allowed and admit(key).used == 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()
