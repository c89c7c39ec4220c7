"""The store's own failures told from faults of what was written, from the errors alone."""
import sqlite3

import peewee
import psycopg2
import psycopg2.errors
import pytest

from store.failures import is_store_failure

STORE_FAILURES = [
    peewee.OperationalError("database is locked"),
    peewee.InterfaceError("connection already closed"),
    sqlite3.OperationalError("database or disk is full"),
    sqlite3.InterfaceError("Cannot operate on a closed database."),
    sqlite3.DatabaseError("file is not a database"),
    peewee.DatabaseError("database disk image is malformed"),
    psycopg2.OperationalError("could not connect to server: Connection refused"),
    psycopg2.errors.AdminShutdown("terminating connection due to administrator command"),
    psycopg2.errors.LockNotAvailable("canceling statement due to lock timeout"),
    psycopg2.InterfaceError("connection already closed"),
]
FAULTS_OF_WHAT_WAS_WRITTEN = [
    OverflowError("Python int too large to convert to SQLite INTEGER"),
    peewee.DataError("bigint out of range"),
    peewee.IntegrityError("UNIQUE constraint failed: report.dedupe_key"),
    peewee.ProgrammingError("syntax error at or near"),
    sqlite3.IntegrityError("NOT NULL constraint failed"),
    psycopg2.errors.NumericValueOutOfRange("bigint out of range"),
    UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"),
    ValueError("a bug of ours"),
    KeyError("policies"),
]


@pytest.mark.parametrize("error", STORE_FAILURES, ids=repr)
def test_the_store_failing_is_the_stores(error):
    assert is_store_failure(error)


@pytest.mark.parametrize("error", FAULTS_OF_WHAT_WAS_WRITTEN, ids=repr)
def test_anything_else_is_not(error):
    assert not is_store_failure(error)
