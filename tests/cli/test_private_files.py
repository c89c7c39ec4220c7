"""The SQLite store is private by default: its folder 0700, its files 0600, WAL and SHM too."""
from __future__ import annotations

import os
import sqlite3
import stat

import pytest

from store import make_database, meter_path
from tests.cli.outcome import ok


@pytest.fixture
def loose_umask():
    """The umask most systems start with, under which files are created readable to all."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_init_creates_a_private_folder_and_files(rua, tmp_path, loose_umask):
    store = tmp_path / "var" / "rua.db"
    ok(rua("init", url=f"sqlite:///{store}"))
    assert mode(store.parent) == 0o700
    assert mode(store) == 0o600 and mode(meter_path(str(store))) == 0o600


def test_wal_and_shm_files_are_created_private(tmp_path, loose_umask):
    store = str(tmp_path / "var" / "rua.db")
    for path in (store, meter_path(store)):
        database = make_database(f"sqlite:///{path}")
        with database.connection_context():
            database.execute_sql("CREATE TABLE IF NOT EXISTS t (x)")
            database.execute_sql("INSERT INTO t VALUES (1)")
            # While a connection is open in WAL mode, its -wal and -shm files exist.
            assert {mode(path + suffix) for suffix in ("", "-wal", "-shm")} == {0o600}


def test_init_makes_the_files_of_an_older_store_private(rua, tmp_path, loose_umask):
    store = tmp_path / "older.db"
    connection = sqlite3.connect(store)      # as sqlite itself makes it: 0644 under this umask
    connection.execute("PRAGMA journal_mode=wal")
    connection.execute("CREATE TABLE t (x)")
    assert mode(store) == 0o644 and mode(f"{store}-wal") == 0o644
    lines = ok(rua("init", url=f"sqlite:///{store}"))
    assert mode(store) == 0o600 and mode(f"{store}-wal") == 0o600
    assert f"made {store} readable by its owner only (0600)" in lines
    connection.close()
