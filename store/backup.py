"""A consistent copy of a SQLite store taken while it serves, and a store restored from one.

SQLite's online backup copies the store as of one moment (a read transaction: writers go on
beside it under WAL), then the request counters' file beside it the same way. A Postgres store
is backed up with pg_dump: postgres_dump_command() says how.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from store import PRIVATE_DIR, PRIVATE_FILE, meter_path


class BackupError(Exception):
    """The copy cannot be made or restored; the message says why, and nothing was changed."""


class Copied(NamedTuple):
    source: str
    target: str
    size: int


def copy_sqlite(source: str, target: str) -> Copied:
    """Copy one SQLite file as of one moment into target, a new file readable by its owner."""
    if not os.path.exists(source):
        raise BackupError(f"{source} does not exist")
    os.makedirs(os.path.dirname(os.path.abspath(target)), mode=PRIVATE_DIR, exist_ok=True)
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        raise BackupError(f"{target} already exists: name a new file") from None
    try:
        with _connect(source) as reading, _connect(target) as writing:
            reading.backup(writing)
    except sqlite3.Error as exc:
        os.unlink(target)
        raise BackupError(f"could not copy {source}: {exc}") from None
    return Copied(source, target, os.path.getsize(target))


def backup_sqlite(store_path: str, target: str) -> list[Copied]:
    """The store and its request counters, each copied as of one moment (target, and its
    counters' file named as rua names them: backup.db -> backup.meter.db)."""
    copied = [copy_sqlite(store_path, target)]
    if os.path.exists(meter_path(store_path)):
        copied.append(copy_sqlite(meter_path(store_path), meter_path(target)))
    return copied


class Restored(NamedTuple):
    copied: list[Copied]
    applied: list[tuple[int, str]]          # the migrations the backup lacked


def restore_sqlite(source: str, store_path: str) -> Restored:
    """Make a store that does not exist yet (or is an empty file) from a backup and its
    counters: both are copied into a folder beside it, checked (store/backup_checks.py),
    brought up to date, and only then renamed into place, so a refused backup leaves nothing."""
    if _holds_tables(store_path):
        raise BackupError(f"{store_path} already holds a store: restore only into an empty one "
                          "(move it away, or set RUA_DATABASE_URL to a new file)")
    if _nonempty(meter_path(store_path)):
        raise BackupError(f"{meter_path(store_path)} already exists: move it away first")
    if not _is_sqlite(source):
        raise BackupError(f"{source} is not a SQLite file")
    staging = _staging_folder(store_path)
    try:
        staged = os.path.join(staging, os.path.basename(store_path))
        copied = [copy_sqlite(source, staged)]
        if os.path.exists(meter_path(source)):
            copied.append(copy_sqlite(meter_path(source), meter_path(staged)))
        from store.backup_checks import check_and_migrate   # the migrations: not for --help
        applied = check_and_migrate(staged)
        _move_into_place(staged, store_path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    placed = [store_path, meter_path(store_path)]
    return Restored([one._replace(target=target) for one, target in zip(copied, placed)],
                    applied)


def _staging_folder(store_path: str) -> str:
    """A new private folder in the store's folder, or in the nearest one that exists (the
    store's own is made only once the backup passed), so the checked copy is renamed in."""
    folder = os.path.dirname(os.path.abspath(store_path))
    while not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        return tempfile.mkdtemp(prefix=".rua-restore-", dir=folder)
    except OSError as exc:
        raise BackupError(f"cannot restore into {folder}: {exc.strerror or exc}") from None


def _move_into_place(staged: str, store_path: str) -> None:
    """Rename the checked store and its counters over the empty files (and their empty -wal
    and -shm) a connection may have left; the store last, so its presence means both are."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(store_path)), mode=PRIVATE_DIR,
                    exist_ok=True)
    except OSError as exc:
        raise BackupError(f"cannot restore into {store_path}: {exc.strerror or exc}") from None
    for path in (store_path, meter_path(store_path)):
        for name in (path, path + "-wal", path + "-shm"):
            if os.path.exists(name) and os.path.getsize(name) == 0:
                os.unlink(name)
    os.replace(meter_path(staged), meter_path(store_path))
    os.replace(staged, store_path)


def postgres_dump_command(url: str, target: str) -> list[str]:
    """pg_dump's arguments for a custom-format dump of the store, password left out (pg_dump
    reads it from PGPASSWORD or ~/.pgpass, so it never shows in a process list)."""
    return ["pg_dump", "--format=custom", f"--file={target}", f"--dbname={without_password(url)}"]


def postgres_restore_command(url: str, source: str) -> list[str]:
    return ["pg_restore", "--no-owner", "--exit-on-error",
            f"--dbname={without_password(url)}", source]


def without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host))


@contextlib.contextmanager
def _connect(path: str):
    connection = sqlite3.connect(path)
    try:
        yield connection
    finally:
        connection.close()


def _is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError as exc:
        raise BackupError(f"cannot read {path}: {exc.strerror or exc}") from None


SQLITE_HEADER = b"SQLite format 3\0"


def _nonempty(path: str) -> bool:
    return os.path.exists(path) and os.path.getsize(path) > 0


def _holds_tables(path: str) -> bool:
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return False
    try:
        with _connect(path) as connection:
            found = connection.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
            return found.fetchone()[0] > 0
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a SQLite file: {exc}") from None
