"""The store: Peewee over SQLite (default) or Postgres, behind two database proxies.

`db` holds everything; `meter` holds the request counters (store/usage.py). On SQLite the
counters live in a file of their own beside the store (rua.db -> rua.meter.db), because every
API request writes them: in the store's file each request would wait behind ingest's and the
snapshotter's long write transactions, and would move the store's version, so no worker could
keep a key or a snapshot between requests (store/versioned.py) nor its page cache. On Postgres
both proxies point at the same database.
"""
from __future__ import annotations

import difflib
import os
from urllib.parse import parse_qsl, urlparse

from peewee import DatabaseProxy, SqliteDatabase
from playhouse.pool import PooledPostgresqlDatabase

from config import ConfigError
from guard.shown import masked

db = DatabaseProxy()
meter = DatabaseProxy()

# WAL lets readers (the web workers) run beside one writer (ingest, snapshotter); the busy
# timeout makes a writer wait for a lock instead of failing at once.
SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "busy_timeout": 5000,
    "synchronous": "normal",
    "cache_size": -16000,
}


def sqlite_path(url: str) -> str | None:
    """The file of a `sqlite:///path` URL; None for any other URL."""
    parsed = urlparse(url)
    if parsed.scheme != "sqlite":
        return None
    return url[len("sqlite:///"):] if url.startswith("sqlite:///") else parsed.path


def meter_path(path: str) -> str:
    """The counters' file beside a SQLite store: rua.db -> rua.meter.db."""
    if path == ":memory:":
        return path
    stem, dot, suffix = path.rpartition(".")
    return f"{stem}.meter.{suffix}" if dot and "/" not in suffix else f"{path}.meter"


def make_private(path: str) -> list[str]:
    """Set a SQLite store's files (and the counters' file), with their -wal and -shm, to 0600
    where others could read them; the files changed. `rua init` runs it on every store,
    whoever made its files: they hold the reports and the keys' digests."""
    changed = []
    for base in (path, meter_path(path)):
        for name in (base, base + "-wal", base + "-shm"):
            try:
                if os.stat(name).st_mode & 0o077:
                    os.chmod(name, PRIVATE_FILE)
                    changed.append(name)
            except FileNotFoundError:
                pass
    return changed


def make_database(url: str):
    """A Peewee database for a `sqlite:///path` or `postgresql://…` URL (autoconnect off)."""
    parsed = urlparse(url)
    path = sqlite_path(url)
    if path is not None:
        return _sqlite(path, autoconnect=False)
    if parsed.scheme in ("postgres", "postgresql", "postgres+pool", "postgresql+pool"):
        options = dict(parse_qsl(parsed.query))
        pool = {name: _whole_number(name, options.pop(name, default), least)
                for name, (default, least) in POOL_OPTIONS.items()}
        _refuse_unknown_options(options)
        return PooledPostgresqlDatabase(
            _database_name(parsed),
            user=parsed.username, password=parsed.password,
            host=parsed.hostname, port=_port(parsed),
            stale_timeout=300, timeout=10, autoconnect=False, **pool, **options)
    raise ConfigError(f"unsupported database URL {masked(url)}: use sqlite:///PATH or "
                      "postgresql://…")


def check_url(url: str) -> None:
    """Raise the ConfigError make_database would for url, without making a SQLite folder."""
    if sqlite_path(url) is None:
        make_database(url)


# The options of a Postgres URL's query rua reads itself: (default, least value); libpq takes
# the others (sslmode, application_name, ...), checked by its own parser before any connection.
POOL_OPTIONS = {"max_connections": (32, 1), "connect_timeout": (5, 0)}


def _whole_number(name: str, raw, least: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < least:
        raise ConfigError(f"RUA_DATABASE_URL: {name}={raw!r} is not a whole number of "
                          f"{least} or more")
    return value


def _refuse_unknown_options(options: dict) -> None:
    """Refuse a query option libpq does not know, naming it (and the closest of rua's own)."""
    from psycopg2 import ProgrammingError
    from psycopg2.extensions import make_dsn, parse_dsn
    for name, value in options.items():
        try:
            parse_dsn(make_dsn(**{name: value}))
        except ProgrammingError:
            close = difflib.get_close_matches(name, POOL_OPTIONS, n=1)
            hint = f": did you mean {close[0]}?" if close else " (see libpq's connection parameters)"
            raise ConfigError(f"RUA_DATABASE_URL: {name} is not a connection option{hint}") \
                from None


# Said instead of urllib's complaint, which quotes the part it could not read: with an unencoded
# '/' in the password, that part is the password.
UNREADABLE_URL = ("the database URL cannot be read: write postgresql://user:password@host:port/"
                  "name, with any '/', '?', '#', '@' or ':' in the password %-encoded "
                  "(%2F, %3F, %23, %40, %3A)")


def _port(parsed) -> int:
    try:
        return parsed.port or 5432
    except ValueError:
        raise ConfigError(UNREADABLE_URL) from None


def _database_name(parsed) -> str:
    name = (parsed.path or "/").lstrip("/") or "postgres"
    if "/" in name or "@" in name:      # a password's tail read as the path
        raise ConfigError(UNREADABLE_URL)
    return name


class PrivateSqliteDatabase(SqliteDatabase):
    """A SQLite store whose file is created 0600 (its folder 0700) whatever the umask: SQLite
    gives its -wal, -shm and -journal files the database file's mode, so they follow."""

    def _connect(self):
        if self.database != ":memory:":
            # O_EXCL: only a file that does not exist yet is opened (and closed) here. Closing
            # a descriptor of a file drops every POSIX lock this process holds on it, so doing
            # it to a store other connections here have open would strip SQLite's locks: a
            # process would then checkpoint and reset the WAL under another's feet.
            try:
                os.close(os.open(self.database, os.O_RDWR | os.O_CREAT | os.O_EXCL,
                                 PRIVATE_FILE))
            except OSError:
                pass  # it exists, or SQLite itself then fails with the error callers handle
        return super()._connect()


PRIVATE_FILE, PRIVATE_DIR = 0o600, 0o700


def _sqlite(path: str, *, autoconnect: bool) -> SqliteDatabase:
    if path != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=PRIVATE_DIR, exist_ok=True)
    return PrivateSqliteDatabase(path, pragmas=SQLITE_PRAGMAS, autoconnect=autoconnect,
                                 check_same_thread=False, timeout=5)


def open_db(url: str):
    """Point the shared proxies at the database named by url and return that database."""
    database = make_database(url)
    db.initialize(database)
    # Each thread opens its own connection to the counters' file on first use and keeps it.
    path = sqlite_path(url)
    meter.initialize(database if path is None else _sqlite(meter_path(path), autoconnect=True))
    return database


def is_postgres() -> bool:
    return isinstance(db.obj, PooledPostgresqlDatabase)
