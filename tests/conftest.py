"""Shared fixtures: a real SQLite file per test, or Postgres when RUA_TEST_DATABASE_URL names one."""
from __future__ import annotations

import os
import pathlib
import shutil
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest
from peewee import AutoField
from psycopg2 import sql

from config import Config
from store import meter, meter_path, open_db, sqlite_path
from store.migrations import migrate
from store.models import MODELS

NAMED_POSTGRES_URL = os.environ.get("RUA_TEST_DATABASE_URL", "")
# pytest-xdist runs the suite in several processes (`make test`: one per CPU); each test empties
# the Postgres database it uses, so each process after the first has a database of its own.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
POSTGRES_URL = NAMED_POSTGRES_URL
if NAMED_POSTGRES_URL and WORKER != "gw0":
    _named = urlsplit(NAMED_POSTGRES_URL)
    POSTGRES_URL = urlunsplit(_named._replace(path=f"{_named.path}_{WORKER}"))
CORPUS = os.environ.get("RUA_CORPUS", "")
_migrated_postgres = False


def pytest_configure(config):
    """A worker's own Postgres database, made from nothing as the named one was."""
    if POSTGRES_URL != NAMED_POSTGRES_URL:
        _drop_worker_database()
        _as_admin(sql.SQL("CREATE DATABASE {}").format(_worker_database()))


def pytest_unconfigure(config):
    if POSTGRES_URL != NAMED_POSTGRES_URL:
        _drop_worker_database()


def _worker_database() -> sql.Identifier:
    return sql.Identifier(urlsplit(POSTGRES_URL).path.lstrip("/"))


def _drop_worker_database() -> None:
    # FORCE ends the connections a killed server under test may have left.
    _as_admin(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(_worker_database()))


def _as_admin(statement) -> None:
    """Run statement outside a transaction, connected to the database the run was given."""
    connection = psycopg2.connect(NAMED_POSTGRES_URL)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(statement)
    finally:
        connection.close()


@pytest.fixture(autouse=True)
def _no_rua_environment(monkeypatch):
    """Each test states its own settings, as Flask's own suite scrubs FLASK_*."""
    for name in list(os.environ):
        if name.startswith("RUA_"):
            monkeypatch.delenv(name)


@pytest.fixture
def database_url(tmp_path):
    return POSTGRES_URL or f"sqlite:///{tmp_path / 'rua.db'}"


@pytest.fixture(scope="session")
def _migrated_sqlite(tmp_path_factory) -> pathlib.Path:
    """One SQLite store migrated once per run, copied for each test: migrating a new file costs
    some 70 ms, copying it a few, and most of the suite's tests start from an empty store."""
    path = tmp_path_factory.mktemp("migrated") / "rua.db"
    database = open_db(f"sqlite:///{path}")
    with database.connection_context():
        migrate(database)
    meter.close()
    return path


@pytest.fixture
def config(database_url, tmp_path):
    return Config(database_url=database_url, offline=True, lock_dir=str(tmp_path))


@pytest.fixture
def database(config, request):
    """An empty, migrated store, connected for the test's length."""
    global _migrated_postgres
    if not POSTGRES_URL:
        _copy_store(request.getfixturevalue("_migrated_sqlite"), config.database_url)
    database = open_db(config.database_url)
    with database.connection_context():
        if not (POSTGRES_URL and _migrated_postgres):
            migrate(database)
            _migrated_postgres = bool(POSTGRES_URL)
        if POSTGRES_URL:
            # The database outlives a test (and maybe an earlier session): start each test empty.
            _empty_postgres(database)
        yield database
    if hasattr(database, "close_all"):
        database.close_all()


def _copy_store(template: pathlib.Path, url: str) -> None:
    """The migrated template's store and counters' files, where url's store is to be; migrate()
    then finds nothing to do but still runs, as on any store a test opens."""
    path = sqlite_path(url)
    if path not in (None, ":memory:") and not pathlib.Path(path).exists():
        shutil.copyfile(template, path)
        shutil.copyfile(meter_path(str(template)), meter_path(path))


def _empty_postgres(database):
    """Delete every row and restart the id sequences, as a fresh SQLite file would start."""
    # DELETE of a few rows takes milliseconds where TRUNCATE of every table takes ~0.4 s,
    # which over the whole suite is minutes. Children go before their parents.
    with database.atomic():
        for model in reversed(MODELS):
            database.execute_sql(f'DELETE FROM "{model._meta.table_name}"')
        for model in MODELS:
            if isinstance(model._meta.primary_key, AutoField):
                database.execute_sql("SELECT setval(pg_get_serial_sequence(%s, %s), 1, false)",
                                     (f'"{model._meta.table_name}"', model._meta.primary_key.column_name))


@pytest.fixture
def rua(database, config):
    """Run `rua ARGS…` (stdin optional) against the test's store; return click's Result."""
    from click.testing import CliRunner

    from cli import main
    from store import db
    runner = CliRunner()

    def invoke(*args, url=None, stdin=None):
        result = runner.invoke(main, [str(a) for a in args], input=stdin,
                               env={"RUA_DATABASE_URL": url or config.database_url,
                                    "RUA_LOCK_DIR": config.lock_dir})
        db.initialize(database)  # the command pointed the shared proxy at its own connection
        return result
    return invoke


@pytest.fixture
def corpus_dir():
    """The shared corpus of real reports (RUA_CORPUS); tests that need it skip without it."""
    if not CORPUS or not pathlib.Path(CORPUS).is_dir():
        pytest.skip("RUA_CORPUS is not set to the report corpus folder")
    return pathlib.Path(CORPUS)
