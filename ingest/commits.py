"""Reports committed in groups, each outcome released only once the group is on disk.

A group lasts COMMIT_SECONDS or COMMIT_REPORTS reports and ends with one flush to disk, after
which its outcomes are handed out: a few hundred small reports cost a few flushes, not one
each, and whatever `rua ingest` reports as stored survives a crash, of the process or of the
machine. A crash loses only reports not reported yet, each whole, which ingesting the same
input again stores.

The group is one transaction, each report a savepoint in it. What its reports add to rows other
reports share (rollups, source facts, domains' DKIM selectors, report versions) is written once,
as it commits, in key order (ingest/shared_rows.py), so concurrent groups wait for each other
only then; on Postgres the reports' own rows and their last records are written then too, a
statement for many reports. A report that another process stored first meanwhile (the same
dedupe key) is then not stored: its outcome says so, as a store failure, so that its input is
read again and the copy judged as such. A circle is left only around the shared rows a group
writes mid-way: a domain new to its organization, and the organization's row a TLS report or a
refused report's event marks.
Postgres ends one by refusing a statement: a store failure that loses nothing reported.

SQLite flushes only the group's commit (synchronous=FULL; the store's other commits keep WAL's
NORMAL, which flushes at checkpoints only); Postgres flushes every commit.
"""
from __future__ import annotations

import time

from ingest.shared_rows import SharedRows
from store import db, is_postgres
from store.failures import is_store_failure, transaction_aborted

COMMIT_SECONDS = 0.5     # SQLite's other writers wait at most this long (plus one report)
COMMIT_REPORTS = 1000
RECORDS_WAITING = 5000   # past this many records held for the group, it writes what it holds
_SQLITE_FLUSHED = "PRAGMA synchronous = FULL"
_SQLITE_UNFLUSHED = "PRAGMA synchronous = NORMAL"     # the store's setting (store.SQLITE_PRAGMAS)


class GroupAborted(Exception):
    """A statement of the group failed outside any report's savepoint (its report was refused
    for it): Postgres keeps nothing of the group."""

    def __str__(self):
        return "a statement before the commit failed, so nothing of this group was stored"


class Group:
    """The open group, its reports' shared sums and the outcomes waiting for its flush."""

    def __init__(self):
        self.shared = SharedRows()
        self.transaction = None      # the group's transaction
        self.inside = False          # the group is part of a caller's transaction (a dry run)
        self.opened = False
        self.started = 0.0
        self.reports = 0
        self.waiting: list = []

    def open(self) -> None:
        """Begin a group before a report is stored, unless one is open."""
        if self.opened:
            return
        if db.in_transaction():
            # ingest/dry_run.py's transaction holds every report and ends them all; SQLite may
            # not change its flush inside it, and there is nothing to flush.
            self.inside = True
        elif is_postgres():
            self.transaction = db.transaction()
            self.transaction.__enter__()
        else:
            db.execute_sql(_SQLITE_FLUSHED)
            # IMMEDIATE: the write lock from the start, as storing.writing says why. A store
            # locked past its busy timeout raises here, and the group is not open.
            transaction = db.transaction(lock_type="IMMEDIATE")
            try:
                transaction.__enter__()
            except Exception:
                db.execute_sql(_SQLITE_UNFLUSHED)
                raise
            self.transaction = transaction
        self.opened, self.started, self.reports = True, time.monotonic(), 0

    def stored(self, count: int = 1) -> None:
        """count more reports stored; the rows held for them written once they are many."""
        self.reports += count
        if self.shared.records >= RECORDS_WAITING:
            self.shared.write_rows()

    def hold(self, outcome) -> list:
        """Keep outcome until its flush; the outcomes a flush due now has released."""
        self.waiting.append(outcome)
        if not self.opened:
            return self.release()
        due = (self.reports >= COMMIT_REPORTS
               or time.monotonic() - self.started >= COMMIT_SECONDS)
        return self.commit() if due else []

    def commit(self) -> list:
        """End the open group (if any) on disk, its shared sums written; every outcome
        waiting, now released. When the store fails to take the group (locked, restarting,
        gone), or a statement of it failed outside any report's savepoint, nothing of it stays
        and each waiting outcome says so (its store_failed), for its input to be read again; any
        other error is raised."""
        if self.opened:
            try:
                if transaction_aborted(db):
                    raise GroupAborted()
                self.shared.write()
                self._end()
            except Exception as exc:
                if not (is_store_failure(exc) or isinstance(exc, GroupAborted)):
                    raise
                failed, self.waiting = self.waiting, []
                self.rollback()
                for outcome in failed:
                    outcome.store_failed(exc)
                return failed
            self._tell_lost()
        return self.release()

    def _end(self) -> None:
        """Commit the group's transaction (unless it is part of a caller's)."""
        self.opened = False
        if self.inside:
            self.inside = False
            return
        transaction, self.transaction = self.transaction, None
        try:
            transaction.__exit__(None, None, None)     # a failed commit is rolled back
        finally:
            if not is_postgres():
                db.execute_sql(_SQLITE_UNFLUSHED)

    def rollback(self) -> None:
        """Give up the open group: nothing of it was reported, and nothing of it stays."""
        self.waiting = []
        self.shared.empty()
        self.shared.lost = set()
        if not self.opened:
            return
        self.opened = False
        if self.inside:
            self.inside = False
        else:
            transaction, self.transaction = self.transaction, None
            transaction.__exit__(RuntimeError, None, None)      # as leaving it by an error
            if not is_postgres():
                db.execute_sql(_SQLITE_UNFLUSHED)

    def _tell_lost(self) -> None:
        """Each waiting outcome drops the reports another process stored first (each outcome's
        lose(ids) turns them into refusals)."""
        lost, self.shared.lost = self.shared.lost, set()
        if lost:
            for outcome in self.waiting:
                outcome.lose(lost)

    def release(self) -> list:
        released, self.waiting = self.waiting, []
        return released
