"""Retention deletes old reports' records and nothing else, in short batches."""
from __future__ import annotations

from datetime import timedelta

import pytest

from store import SQLITE_PRAGMAS, db, retention
from store.models import DailyRollup, Record, Report
from tests.factories import make_org
from tests.snapshotter.reports import NOW, TODAY, report_on


@pytest.fixture
def org(database):
    org = make_org("Acme")
    for back in (0, 10, 31, 45, 90):
        report_on(org, "example.com", TODAY - timedelta(days=back),
                  [{"source_ip": "192.0.2.1", "count": 5}, {"source_ip": "192.0.2.2", "count": 1}])
    return org


def _kept_reports() -> set[int]:
    return {(NOW.date() - row.day_end).days for row in Report.select()
            if Record.select().where(Record.report == row.id).exists()}


def test_records_of_reports_older_than_the_retention_go_and_the_rest_stay(org):
    done = retention.prune(NOW, 30)
    assert (done.reports, done.records) == (3, 6)
    assert done.kept == Record.select().count() == 4
    assert done.cutoff == TODAY - timedelta(days=30)
    assert _kept_reports() == {0, 10}
    pruned = Report.select().where(Report.records_pruned_at.is_null(False))
    assert pruned.count() == 3 and all(r.records_pruned_at == NOW for r in pruned)


def test_reports_rollups_and_summaries_are_kept(org):
    rollups = list(DailyRollup.select().order_by(DailyRollup.id).dicts())
    summaries = list(Report.select(Report.id, Report.total_messages, Report.compliant_messages)
                     .order_by(Report.id).tuples())
    retention.prune(NOW, 30)
    assert list(DailyRollup.select().order_by(DailyRollup.id).dicts()) == rollups
    assert list(Report.select(Report.id, Report.total_messages, Report.compliant_messages)
                .order_by(Report.id).tuples()) == summaries


def test_a_dry_run_counts_the_same_and_deletes_nothing(org):
    counted = retention.prune(NOW, 30, dry_run=True)
    assert (counted.reports, counted.records, counted.kept) == (3, 6, 4)
    assert Record.select().count() == 10
    assert not Report.select().where(Report.records_pruned_at.is_null(False)).exists()
    done = retention.prune(NOW, 30)
    assert (done.reports, done.records) == (counted.reports, counted.records)


def test_a_second_prune_finds_nothing_more(org):
    retention.prune(NOW, 30)
    again = retention.prune(NOW, 30)
    assert (again.reports, again.records, again.kept) == (0, 0, 4)


def test_reports_are_pruned_in_batches_each_its_own_transaction(org, monkeypatch):
    monkeypatch.setattr(retention, "REPORTS_PER_BATCH", 1)
    monkeypatch.setattr(retention, "PAUSE_SECONDS", 0)
    seen = []
    retention.prune(NOW, 30, progress=lambda done: seen.append((done, db.in_transaction())))
    assert seen == [(1, False), (2, False), (3, False)]


@pytest.mark.parametrize("budget, batches", [(4, [2, 3]), (3, [1, 2, 3]), (1, [1, 2, 3])])
def test_a_batch_holds_records_up_to_its_budget_and_at_least_one_report(org, monkeypatch,
                                                                        budget, batches):
    monkeypatch.setattr(retention, "RECORDS_PER_BATCH", budget)     # 2 records a report
    monkeypatch.setattr(retention, "PAUSE_SECONDS", 0)
    seen = []
    assert retention.prune(NOW, 30, progress=seen.append).records == 6
    assert seen == batches


def test_a_sqlite_prune_waits_longer_for_the_lock_then_waits_as_before(config, org):
    if not config.is_sqlite:
        pytest.skip("SQLite's busy timeout")
    retention.prune(NOW, 30)
    assert db.execute_sql("PRAGMA busy_timeout").fetchone()[0] == SQLITE_PRAGMAS["busy_timeout"]


def test_a_new_sqlite_store_gives_freed_pages_back(config, org):
    if not config.is_sqlite:
        pytest.skip("Postgres: autovacuum reuses the space")
    assert retention.incremental_vacuum()
    for n in range(300):
        report_on(org, "example.org", TODAY - timedelta(days=200),
                  [{"source_ip": f"198.51.100.{n % 250}", "count": 1, "envelope_from": "x" * 200}
                   for _ in range(20)], report_id=f"bulk-{n}")
    done = retention.prune(NOW, 30)
    assert done.freed_pages > 0
    assert db.execute_sql("PRAGMA freelist_count").fetchone()[0] == 0
