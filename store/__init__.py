"""The store: Peewee over SQLite (default) or Postgres, behind one database proxy."""
from __future__ import annotations

import os
from urllib.parse import parse_qsl, urlparse

from peewee import DatabaseProxy, SqliteDatabase
from playhouse.pool import PooledPostgresqlDatabase

db = DatabaseProxy()

# WAL lets readers (the web workers) run beside one writer (ingest, snapshotter); the busy
# timeout makes a writer wait for a lock instead of failing at once.
SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "busy_timeout": 5000,
    "synchronous": "normal",
    "cache_size": -16000,
}


def make_database(url: str):
    """A Peewee database for a `sqlite:///path` or `postgresql://…` URL (autoconnect off)."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else parsed.path
        if path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        return SqliteDatabase(path, pragmas=SQLITE_PRAGMAS, autoconnect=False,
                              check_same_thread=False, timeout=5)
    if parsed.scheme in ("postgres", "postgresql", "postgres+pool", "postgresql+pool"):
        options = dict(parse_qsl(parsed.query))
        return PooledPostgresqlDatabase(
            (parsed.path or "/").lstrip("/") or "postgres",
            user=parsed.username, password=parsed.password,
            host=parsed.hostname, port=parsed.port or 5432,
            max_connections=int(options.pop("max_connections", 32)),
            stale_timeout=300, timeout=10, autoconnect=False,
            connect_timeout=int(options.pop("connect_timeout", 5)), **options)
    raise ValueError(f"unsupported database URL {url!r}: use sqlite:///PATH or postgresql://…")


def open_db(url: str):
    """Point the shared proxy at the database named by url and return that database."""
    database = make_database(url)
    db.initialize(database)
    return database


def is_postgres() -> bool:
    return isinstance(db.obj, PooledPostgresqlDatabase)
