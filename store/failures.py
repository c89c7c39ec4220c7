"""Which errors are the store's own failures (unreachable, locked, restarting, damaged) rather
than faults of what was being written: work that met one is kept to be done again, and the
input is not blamed for it."""
from __future__ import annotations

import sqlite3
import sys

import peewee

# Peewee wraps the driver's errors in its own classes only around the statements it runs: one
# raised elsewhere (a pooled connection's rollback or close) comes as the driver's own.
_FAILURES = (peewee.OperationalError, peewee.InterfaceError,
             sqlite3.OperationalError, sqlite3.InterfaceError)
# The bare DatabaseError, no subclass of it: a SQLite file that is damaged or not a database.
_DAMAGED = (peewee.DatabaseError, sqlite3.DatabaseError)


def is_store_failure(exc: BaseException) -> bool:
    """True when exc says the store itself failed; False for any other error (a constraint,
    a value out of range, a bug), which the input being written is held to."""
    if isinstance(exc, _FAILURES) or type(exc) in _DAMAGED:
        return True
    # Peewee imports psycopg2 when it is installed; when it is not, nothing raised its errors.
    psycopg2 = sys.modules.get("psycopg2")
    if psycopg2 is None:
        return False
    return isinstance(exc, (psycopg2.OperationalError, psycopg2.InterfaceError))
