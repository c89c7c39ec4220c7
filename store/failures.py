"""Which errors are the store's own failures (unreachable, locked, restarting, out of room,
damaged) rather than faults of what was being written: work that met one is kept to be done
again, and the input is not blamed for it. Told by the database's own code for the error, as
the driver's class alone does not tell them apart: SQLite's "database is locked" and "too many
SQL variables" are both an OperationalError, and so are Postgres's shutdown and its "cannot pass
more than 100 arguments"."""
from __future__ import annotations

import sqlite3
import sys

# SQLite's primary result codes that mean the store failed, each with the text SQLite gives
# it (Python 3.10 gives only the text): PERM, BUSY, LOCKED, NOMEM, READONLY, INTERRUPT, IOERR,
# CORRUPT, FULL, CANTOPEN, PROTOCOL, NOTADB.
SQLITE_FAILURES = {
    3: "access permission denied", 5: "database is locked", 6: "database table is locked",
    7: "out of memory", 8: "attempt to write a readonly database", 9: "interrupted",
    10: "disk I/O error", 11: "database disk image is malformed",
    13: "database or disk is full", 14: "unable to open database file",
    15: "locking protocol", 26: "file is not a database",
}
# Postgres SQLSTATE classes and codes that mean the server failed: connection exception (08),
# transaction rollback (40: serialization failure, deadlock), insufficient resources (53),
# operator intervention (57: shutdown, cancel), system error (58), internal error (XX:
# corrupted data), a read-only transaction (25006: a standby) and a lock not granted (55P03).
POSTGRES_FAILURES = ("08", "40", "53", "57", "58", "XX", "25006", "55P03")


def is_store_failure(exc: BaseException) -> bool:
    """True when exc says the store itself failed; False for any other error (a constraint,
    a value out of range, a statement too large, a bug), which the input is held to."""
    error = exc
    while isinstance(getattr(error, "orig", None), Exception):
        error = error.orig      # the driver's error a peewee error wraps (some twice)
    if isinstance(error, sqlite3.Error):
        return _sqlite_failure(error)
    # Peewee imports psycopg2 when it is installed; when it is not, nothing raised its errors.
    psycopg2 = sys.modules.get("psycopg2")
    if psycopg2 is not None and isinstance(error, psycopg2.Error):
        return _postgres_failure(error, psycopg2)
    return False


def _sqlite_failure(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in SQLITE_FAILURES      # the primary code of an extended one
    return str(error).startswith(tuple(SQLITE_FAILURES.values()))


def _postgres_failure(error, psycopg2) -> bool:
    if error.pgcode is None:
        # No answer from the server: the connection was refused, lost or closed.
        return isinstance(error, (psycopg2.OperationalError, psycopg2.InterfaceError))
    return error.pgcode.startswith(POSTGRES_FAILURES)


def transaction_aborted(database) -> bool:
    """Postgres: whether the connection's transaction is aborted (a statement in it failed
    outside any savepoint). Only a rollback ends it, and its commit would roll back in silence."""
    psycopg2 = sys.modules.get("psycopg2")
    if psycopg2 is None or database.is_closed():
        return False
    connection = database.connection()
    return (isinstance(connection, psycopg2.extensions.connection)
            and connection.get_transaction_status()
            == psycopg2.extensions.TRANSACTION_STATUS_INERROR)
