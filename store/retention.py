"""Retention: a report's per-record rows deleted once its period is older than the retention.

Only Record rows go. Daily rollups, snapshots, score history, report summaries and events stay,
so every figure the API shows for the past is the same after a prune; the report remembers
when its records went (Report.records_pruned_at) and its detail says so. Deleted in batches
of reports, each its own short transaction, so no write lock is held for long.

On SQLite a prune shares the one write lock with ingest (which frees it between its groups of
at most half a second): each batch takes the lock first (IMMEDIATE), waits for it as long as
LOCK_WAIT_MS, and is followed by a pause in which a waiting ingest gets its turn.
"""
from __future__ import annotations

import contextlib
import time
from datetime import date, datetime, timedelta
from typing import NamedTuple

from peewee import fn

from store import SQLITE_PRAGMAS, db, is_postgres
from store.models import PrunedAddress, Record, Report

REPORTS_PER_BATCH = 200
RECORDS_PER_BATCH = 5000        # so a batch holds the write lock for tens of milliseconds
# SQLite: how long a batch waits for the write lock, and the pause after it (longer than the
# 100 ms between a waiting writer's tries, so one that waits always finds the lock free).
LOCK_WAIT_MS = 300_000
PAUSE_SECONDS = 0.15


class Pruned(NamedTuple):
    cutoff: date                # reports whose period ended before this day lost their records
    reports: int                # reports whose records were (or would be) deleted
    records: int                # records deleted (or that would be)
    kept: int                   # records kept
    freed_pages: int            # SQLite pages given back to the file system (0 on Postgres)


def cutoff_day(now: datetime, days: int) -> date:
    return (now - timedelta(days=days)).date()


def _due(cutoff: date):
    return Report.select(Report.id).where(Report.day_end < cutoff,
                                          Report.records_pruned_at.is_null())


def prune(now: datetime, days: int, *, dry_run: bool = False, progress=None) -> Pruned:
    """Delete the records of reports whose period ended more than `days` days before now (or
    count them with dry_run); progress(reports_done) is called after each batch."""
    cutoff = cutoff_day(now, days)
    if dry_run:
        reports = _due(cutoff).count()
        records = Record.select().where(Record.report.in_(_due(cutoff))).count()
        return Pruned(cutoff, reports, records, _all_records() - records, 0)
    reports = records = 0
    with _waiting_for_the_lock():
        while True:
            if reports and not is_postgres():
                time.sleep(PAUSE_SECONDS)       # an ingest waiting for the lock takes it now
            batch = _prune_batch(cutoff, now)
            if batch is None:
                break
            reports, records = reports + batch[0], records + batch[1]
            if progress is not None:
                progress(reports)
        return Pruned(cutoff, reports, records, _all_records(), give_back_space())


def _prune_batch(cutoff: date, now: datetime) -> tuple[int, int] | None:
    """The next due reports' records deleted in one transaction: (reports, records), or None
    when no report is due."""
    with _writing():
        due = (_due(cutoff).select(Report.id, Report.record_count).order_by(Report.id)
               .limit(REPORTS_PER_BATCH).tuples())
        ids = _first_within_budget(due)
        if not ids:
            return None
        _keep_addresses(ids)
        records = Record.delete().where(Record.report.in_(ids)).execute()
        Report.update(records_pruned_at=now).where(Report.id.in_(ids)).execute()
    return len(ids), records


def _first_within_budget(due) -> list:
    """The ids of the first reports whose records add up to RECORDS_PER_BATCH (at least one)."""
    ids, total = [], 0
    for report_id, record_count in due:
        if ids and total + record_count > RECORDS_PER_BATCH:
            break
        ids.append(report_id)
        total += record_count
    return ids


def _writing():
    """A batch's transaction; on SQLite it takes the write lock at once (IMMEDIATE): a batch
    that read first would be refused the lock at once, not wait, had an ingest written since."""
    if is_postgres():
        return db.atomic()
    return db.atomic(lock_type="IMMEDIATE")


@contextlib.contextmanager
def _waiting_for_the_lock():
    """SQLite: this connection waits up to LOCK_WAIT_MS for the write lock, then its usual
    busy timeout again."""
    if is_postgres():
        yield
        return
    db.execute_sql(f"PRAGMA busy_timeout = {LOCK_WAIT_MS}")
    try:
        yield
    finally:
        db.execute_sql(f"PRAGMA busy_timeout = {SQLITE_PRAGMAS['busy_timeout']}")


def _keep_addresses(ids: list[str]) -> None:
    """Keep each report's distinct sending addresses before its records go: the contract's
    source_ip filter finds a report by them whether or not its records are kept."""
    addresses = (Record.select(Record.report, Record.org, Record.source_ip).distinct()
                 .where(Record.report.in_(ids)))
    PrunedAddress.insert_from(addresses, [PrunedAddress.report, PrunedAddress.org,
                                          PrunedAddress.source_ip]).execute()


def _all_records() -> int:
    return Record.select(fn.COUNT(Record.id)).scalar() or 0


def give_back_space() -> int:
    """SQLite: return the free pages to the file system when the store allows it (a store made
    with incremental auto-vacuum); how many. Postgres: autovacuum reuses the space itself."""
    if is_postgres() or not incremental_vacuum():
        return 0
    free = db.execute_sql("PRAGMA freelist_count").fetchone()[0]
    # Through a cursor each step frees one page; a script runs the statement to its end.
    db.connection().executescript("PRAGMA incremental_vacuum")
    return free


def incremental_vacuum() -> bool:
    """Whether the SQLite store was made with incremental auto-vacuum (PRAGMA auto_vacuum 2)."""
    return not is_postgres() and db.execute_sql("PRAGMA auto_vacuum").fetchone()[0] == 2


def vacuum() -> None:
    """Rewrite a SQLite store whole (a long exclusive lock: for a quiet hour), switching it to
    incremental auto-vacuum so later prunes give space back by themselves."""
    db.execute_sql("PRAGMA auto_vacuum = incremental")
    db.execute_sql("VACUUM")
