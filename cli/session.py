"""Opening the store for an admin command: clear errors for a missing schema or an unreachable server."""
from __future__ import annotations

import contextlib
import os
import time

from cli.common import fail
from guard.shown import masked


def redacted(url: str) -> str:
    """The database URL with any password replaced, fit for an error message."""
    return masked(url)


@contextlib.contextmanager
def open_store(config, *, need_schema: bool = True):
    """Connect for one command; with need_schema, insist that `rua init` brought it up to date."""
    from store import open_db
    unreachable = unreachable_errors()
    where = redacted(config.database_url)
    missing = _missing_sqlite_file(config.database_url)
    if need_schema and missing:
        fail(f"no database at {missing}: run `rua init` first")
    try:
        database = open_db(config.database_url)
    except ValueError as exc:
        fail(str(exc))
    except OSError as exc:  # the SQLite file's folder cannot be made
        fail(f"cannot use the database {where}: {exc.strerror or exc} ({exc.filename})")
    try:
        with database.connection_context():
            if need_schema:
                _check_schema(database, where)
            yield database
    except unreachable as exc:
        fail(f"cannot use the database {where}: {first_line(exc)}")
    finally:
        if hasattr(database, "close_all"):
            database.close_all()


def unreachable_errors() -> tuple[type[Exception], ...]:
    """Errors that mean "the store cannot be reached or read", as opposed to a command's own
    constraint errors, which commands turn into messages themselves."""
    from peewee import InterfaceError, OperationalError
    return (OperationalError, InterfaceError)


def wait_for_store(database, pause: float = 0.5) -> None:
    """For a command that outlives a store restart, between two units of work each in a
    connection of its own: return once a new connection answers, trying every `pause` seconds.
    The pool's idle connections are dropped first: they are the dead server's."""
    while True:
        if hasattr(database, "close_idle"):
            database.close_idle()
        try:
            with database.connection_context():
                database.execute_sql("SELECT 1")
            return
        except unreachable_errors():
            time.sleep(pause)


def _missing_sqlite_file(url: str) -> str | None:
    """The path of a SQLite store whose file does not exist, else None. Checked before opening,
    because opening makes the file's folder and connecting makes an empty file."""
    from store import sqlite_path
    path = sqlite_path(url)
    if path is None or path == ":memory:" or os.path.exists(path):
        return None
    return path


def _check_schema(database, where: str):
    from store.migrations import (UnknownSchema, applied_versions, current_version,
                                  latest_version, refuse_unknown)
    version = current_version(database)
    try:
        refuse_unknown(applied_versions(database))
    except UnknownSchema as exc:
        fail(f"{exc}: run a rua that knows it")
    if version == 0:
        fail(f"the database {where} has no rua schema: run `rua init` first")
    if version < latest_version():
        fail(f"the schema is at version {version} of {latest_version()}: run `rua init` to upgrade")


def first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
