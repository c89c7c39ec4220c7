"""Values remembered between requests for as long as nobody else has written to the store.

SQLite says so for free: `PRAGMA data_version` changes on a connection whenever another
connection has committed to the file since (ingest, the snapshotter, `rua key revoke`, another
worker), and the connection's `total_changes` counts its own writes. The request counters live
in their own file (store/__init__.py), so the busy traffic of metering moves neither. Postgres
has no such signal: there nothing is remembered.
"""
from __future__ import annotations

import sqlite3
import threading

SIZE = 10_000


def data_version(database) -> tuple | None:
    """A token that differs once anyone, this connection included, has written to the store;
    None when the store cannot say (Postgres)."""
    connection = database.connection()
    if not isinstance(connection, sqlite3.Connection):
        return None
    others = connection.execute("PRAGMA data_version").fetchone()[0]
    return connection, others, connection.total_changes


class Versioned:
    """A per-thread dict of values valid at one data_version token (each thread has its own
    connection, and tokens of two connections do not compare)."""

    def __init__(self, size: int = SIZE):
        self.size = size
        self._local = threading.local()

    def values(self, token) -> dict | None:
        """The values held at this token (emptied when the token moved); None: hold nothing."""
        if token is None:
            return None
        local = self._local
        if getattr(local, "token", None) != token or len(local.values) >= self.size:
            local.token, local.values = token, {}
        return local.values

    def held(self, token, key):
        """The value held for key at this token, or None; never computes."""
        local = self._local
        if token is None or getattr(local, "token", None) != token:
            return None
        return local.values.get(key)

    def get(self, token, key, compute):
        """compute() for key, held while the token holds; a None result is not held."""
        values = self.values(token)
        found = values.get(key) if values is not None else None
        if found is None:
            found = compute()
            if values is not None and found is not None:
                values[key] = found
        return found
