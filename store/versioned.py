"""Values a worker keeps between requests for as long as nobody has written to the store.

What it buys: the API key, the snapshot and the monitored check of a request need no query
when an earlier request of the same worker read them at the same store version, and the
snapshot fast path (webapp/snapshot_fast_path.py) answers from them without Flask (bench/mechanisms.py,
"caches").

What it costs to keep correct: nothing kept may outlive a write. SQLite says so for free:
`PRAGMA data_version` changes on a connection whenever another connection has committed to the
file since (ingest, the snapshotter, `rua key revoke`, another worker), and the connection's
`total_changes` counts its own writes. So the busy metering writes must go to a file of their
own (store/__init__.py), and a write the API makes (a key's last use) is kept to once a day.
Postgres has no such signal: there nothing is kept.
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


class VersionCache:
    """A per-thread dict of values valid at one data_version token (each thread has its own
    connection, and tokens of two connections do not compare)."""

    def __init__(self, size: int = SIZE):
        self.size = size
        self._local = threading.local()

    def values(self, token) -> dict | None:
        """The values kept at this token (emptied when the token moved); None: keep nothing."""
        if token is None:
            return None
        local = self._local
        if getattr(local, "token", None) != token or len(local.values) >= self.size:
            local.token, local.values = token, {}
        return local.values

    def peek(self, token, key):
        """The value kept for key at this token, or None; never computes."""
        local = self._local
        if token is None or getattr(local, "token", None) != token:
            return None
        return local.values.get(key)

    def get(self, token, key, compute):
        """compute() for key, kept while the token holds; a None result is not kept."""
        values = self.values(token)
        found = values.get(key) if values is not None else None
        if found is None:
            found = compute()
            if values is not None and found is not None:
                values[key] = found
        return found
