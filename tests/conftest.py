"""Shared fixtures: a real SQLite file per test, or Postgres when RUA_TEST_DATABASE_URL names one."""
from __future__ import annotations

import os
import pathlib

import pytest
from peewee import AutoField

from config import Config
from store import open_db
from store.migrations import migrate
from store.models import MODELS

POSTGRES_URL = os.environ.get("RUA_TEST_DATABASE_URL", "")
CORPUS = os.environ.get("RUA_CORPUS", "")
_migrated_postgres = False


@pytest.fixture(autouse=True)
def _no_rua_environment(monkeypatch):
    """Each test states its own settings, as Flask's own suite scrubs FLASK_*."""
    for name in list(os.environ):
        if name.startswith("RUA_"):
            monkeypatch.delenv(name)


@pytest.fixture
def database_url(tmp_path):
    return POSTGRES_URL or f"sqlite:///{tmp_path / 'rua.db'}"


@pytest.fixture
def config(database_url, tmp_path):
    return Config(database_url=database_url, offline=True, lock_dir=str(tmp_path))


@pytest.fixture
def database(config):
    """An empty, migrated store, connected for the test's length."""
    global _migrated_postgres
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
