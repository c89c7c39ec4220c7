"""Reports committed in groups, each outcome released only once the commit holding it is done.

On SQLite every report is a savepoint inside a group's transaction, committed after
COMMIT_SECONDS or COMMIT_REPORTS reports, that commit alone flushed to disk (synchronous=FULL;
the store's other commits keep WAL's NORMAL, which no flush follows): a few hundred small
reports cost a few flushes, not one each, and whatever `rua ingest` reports as stored survives
a crash, of the process or of the machine. A crash loses only reports it had not reported yet,
whole (their group's transaction), which ingesting the same input again stores.

On Postgres a report is its own transaction, as it was: concurrent ingests there hold the rows
they upsert (sources, rollups) until their commit, and a group would hold them for all its
reports, waiting on and deadlocking with each other's.
"""
from __future__ import annotations

import time

from store import db, is_postgres

COMMIT_SECONDS = 0.5     # other writers wait at most this long (plus one report) for the lock
COMMIT_REPORTS = 1000
_FLUSHED = "PRAGMA synchronous = FULL"
_UNFLUSHED = "PRAGMA synchronous = NORMAL"     # the store's own setting (store.SQLITE_PRAGMAS)


class Group:
    """The open group's transaction and the outcomes waiting for its commit."""

    def __init__(self):
        self.transaction = None
        self.started = 0.0
        self.reports = 0
        self.waiting: list = []

    def open(self) -> None:
        """Begin a group before a report is stored, unless one is open (SQLite only)."""
        if self.transaction is not None or is_postgres():
            return
        db.execute_sql(_FLUSHED)
        # IMMEDIATE: the write lock from the start, as storing._writing says why.
        self.transaction = db.transaction(lock_type="IMMEDIATE")
        self.transaction.__enter__()
        self.started, self.reports = time.monotonic(), 0

    def stored(self, count: int = 1) -> None:
        self.reports += count

    def hold(self, outcome) -> list:
        """Keep outcome until its commit; the outcomes a commit due now has released."""
        self.waiting.append(outcome)
        if self.transaction is None:
            return self.release()
        due = (self.reports >= COMMIT_REPORTS
               or time.monotonic() - self.started >= COMMIT_SECONDS)
        return self.commit() if due else []

    def commit(self) -> list:
        """Commit the open group (if any); every outcome waiting, now released."""
        if self.transaction is not None:
            transaction, self.transaction = self.transaction, None
            transaction.__exit__(None, None, None)
            db.execute_sql(_UNFLUSHED)
        return self.release()

    def rollback(self) -> None:
        """Give up the open group: nothing of it was reported, nothing of it stays."""
        self.waiting = []
        if self.transaction is not None:
            transaction, self.transaction = self.transaction, None
            transaction.__exit__(RuntimeError, None, None)      # as leaving it by an error
            db.execute_sql(_UNFLUSHED)

    def release(self) -> list:
        released, self.waiting = self.waiting, []
        return released
