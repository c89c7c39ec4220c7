"""Opening the store for an admin command: clear errors for a missing schema or an unreachable server."""
from __future__ import annotations

import contextlib
import os

from peewee import InterfaceError, OperationalError, SqliteDatabase

from cli.common import fail
from guard.shown import masked
from store import open_db
from store.migrations import current_version, latest_version

# Errors that mean "the store cannot be reached or read", as opposed to a command's own
# constraint errors, which commands turn into messages themselves.
UNREACHABLE = (OperationalError, InterfaceError)


def redacted(url: str) -> str:
    """The database URL with any password replaced, fit for an error message."""
    return masked(url)


@contextlib.contextmanager
def open_store(config, *, need_schema: bool = True):
    """Connect for one command; with need_schema, insist that `rua init` brought it up to date."""
    where = redacted(config.database_url)
    try:
        database = open_db(config.database_url)
    except ValueError as exc:
        fail(str(exc))
    except OSError as exc:  # the SQLite file's folder cannot be made
        fail(f"cannot use the database {where}: {exc.strerror or exc} ({exc.filename})")
    if need_schema and _missing_sqlite_file(database):
        fail(f"no database at {database.database}: run `rua init` first")
    try:
        with database.connection_context():
            if need_schema:
                _check_schema(database, where)
            yield database
    except UNREACHABLE as exc:
        fail(f"cannot use the database {where}: {_first_line(exc)}")
    finally:
        if hasattr(database, "close_all"):
            database.close_all()


def _missing_sqlite_file(database) -> bool:
    # Checked before connecting, because connecting would create an empty file.
    return (isinstance(database, SqliteDatabase) and database.database != ":memory:"
            and not os.path.exists(database.database))


def _check_schema(database, where: str):
    version = current_version(database)
    if version == 0:
        fail(f"the database {where} has no rua schema: run `rua init` first")
    if version < latest_version():
        fail(f"the schema is at version {version} of {latest_version()}: run `rua init` to upgrade")


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
