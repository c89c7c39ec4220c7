"""The store's own failures told from faults of what was written, on errors a real SQLite (and
a real Postgres, when the tests have one) raised through peewee, as rua meets them."""
from __future__ import annotations

import contextlib
import sqlite3

import peewee
import psycopg2
import pytest

from store.failures import is_store_failure
from tests.conftest import POSTGRES_URL


def raised(database: peewee.Database, sql: str, params=()) -> Exception:
    """The error database raises running sql."""
    with pytest.raises(Exception) as caught:
        database.execute_sql(sql, params)
    return caught.value


@pytest.fixture
def sqlite_file(tmp_path):
    database = peewee.SqliteDatabase(str(tmp_path / "s.db"), timeout=0)
    database.execute_sql("CREATE TABLE t (n INTEGER NOT NULL UNIQUE)")
    yield database
    database.close()


def test_sqlite_locked_or_not_a_database_is_the_stores(sqlite_file, tmp_path):
    with contextlib.closing(sqlite3.connect(sqlite_file.database, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        locked = raised(sqlite_file, "INSERT INTO t VALUES (1)")
        other.execute("ROLLBACK")
    (tmp_path / "text.db").write_text("not a database " * 100)
    damaged = raised(peewee.SqliteDatabase(str(tmp_path / "text.db")), "SELECT * FROM t")
    assert (type(locked), str(locked)) == (peewee.OperationalError, "database is locked")
    assert is_store_failure(locked) and is_store_failure(damaged)


def test_sqlite_faults_of_what_was_written_are_not(sqlite_file):
    sqlite_file.execute_sql("INSERT INTO t VALUES (1)")
    over = sqlite_file.connection().getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) + 1
    faults = [raised(sqlite_file, "INSERT INTO t VALUES (1)"),
              raised(sqlite_file, "INSERT INTO t VALUES (?)", (10**30,)),
              raised(sqlite_file, f"SELECT 1 WHERE 1 IN ({','.join('?' * over)})", [1] * over),
              raised(sqlite_file, "SELECT zeroblob(2000000000)")]
    assert [type(fault).__name__ for fault in faults] == [
        "IntegrityError", "OverflowError", "OperationalError", "DataError"]
    assert "too many SQL variables" in str(faults[2])
    assert not any(is_store_failure(fault) for fault in faults)


@pytest.mark.parametrize("text, failed", [("database is locked", True),
                                          ("disk I/O error", True),
                                          ("too many SQL variables", False)])
def test_an_sqlite_error_without_its_code_is_told_by_sqlites_text(text, failed):
    assert is_store_failure(sqlite3.OperationalError(text)) is failed     # Python 3.10


def test_errors_of_no_database_are_not():
    assert not is_store_failure(ValueError("a bug of ours"))
    assert not is_store_failure(KeyError("policies"))
    assert not is_store_failure(peewee.InterfaceError("Query must be bound to a database"))


@pytest.fixture
def postgres():
    if not POSTGRES_URL:
        pytest.skip("RUA_TEST_DATABASE_URL names no Postgres")
    database = peewee.PostgresqlDatabase(None)
    database.init(POSTGRES_URL.rsplit("/", 1)[1], dsn=POSTGRES_URL)
    yield database
    database.close()


def test_postgres_shut_down_or_unreachable_is_the_stores(postgres):
    pid = postgres.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
    with contextlib.closing(psycopg2.connect(POSTGRES_URL)) as other:
        other.autocommit = True
        other.cursor().execute("SELECT pg_terminate_backend(%s)", (pid,))
        shut_down = raised(postgres, "SELECT 1")
    unreachable = raised(peewee.PostgresqlDatabase("rua", host="127.0.0.1", port=1), "SELECT 1")
    assert is_store_failure(shut_down) and is_store_failure(unreachable)


def test_postgres_faults_of_what_was_written_are_not(postgres):
    too_many_arguments = f"SELECT concat({','.join(['1'] * 101)})"
    faults = [raised(postgres, too_many_arguments),
              raised(postgres, "SELECT %s::bigint", (10**30,)),
              raised(postgres, "SELECT %s::text", ("\x00",))]
    assert [getattr(fault.orig, "pgcode", None) for fault in faults[:2]] == ["54023", "22003"]
    assert not any(is_store_failure(fault) for fault in faults)
