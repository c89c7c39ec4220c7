"""What a SQLite backup must be before rua restores it: sound pages, schema versions this rua
knows, and exactly the tables, indexes, triggers and views rua's own migrations make (by
name, and by a trigger's or view's text, a table's columns, an index's columns).

A backup is a file anyone could have edited, and a trigger added to it would run on every
write of the restored store (one that gives each new organization a key its author knows,
say). What rua makes is never listed by hand: it is read from a scratch store this rua
migrates to the same versions.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import tempfile
from typing import NamedTuple

from peewee import PeeweeException

from store import db, meter, meter_path, open_db
from store.backup import BackupError
from store.migrations import UnknownSchema, migrate, refuse_unknown

STORE, COUNTERS = "the backup", "the backup's counters file"
COUNTS_ONLY = "it holds request counts only: move it away from the backup to restore without them"
# Code that runs on the store's writes and reads: compared by its text, not only its name.
CODE = frozenset({"trigger", "view"})
EVERY_KIND = CODE | {"table", "index"}
# Tables SQLite keeps for itself (AUTOINCREMENT, ANALYZE); its automatic indexes have no SQL.
SQLITE_TABLES = frozenset({"sqlite_sequence", "sqlite_stat1", "sqlite_stat2", "sqlite_stat3",
                           "sqlite_stat4"})


class SchemaObject(NamedTuple):
    kind: str                   # table, index, trigger or view
    name: str
    table: str
    shape: str                  # what must match beside the name (_shape)


class MadeByRua(NamedTuple):
    store: frozenset[SchemaObject]
    counters: frozenset[SchemaObject]


def check_and_migrate(path: str) -> list[tuple[int, str]]:
    """Check the staged copy of a backup at path (and its counters' file beside it), bring it
    up to date as `rua init` does, and check it again; BackupError says what is wrong."""
    counters = meter_path(path) if os.path.exists(meter_path(path)) else None
    check_sound(path, STORE)
    if counters:
        with _counts_only():
            check_sound(counters, COUNTERS)
    made = made_by_rua(frozenset(schema_versions(path)))
    # Before anything runs on it: only rua's own triggers may fire while it is migrated.
    _check_both(path, counters, made, CODE, lacking=False)
    try:
        applied = migrate_file(path)
    # A migration failing over the backup's rows or tables: the staged copy is dropped unused.
    except (PeeweeException, sqlite3.Error, ValueError, TypeError) as exc:
        raise BackupError(f"{STORE} cannot be brought up to date: {_first_line(exc)}") from None
    _check_both(path, counters, made_by_rua(None), EVERY_KIND, lacking=True)
    return applied


def _check_both(path: str, counters: str | None, made: MadeByRua, kinds: frozenset[str], *,
                lacking: bool) -> None:
    check_objects(path, made.store, STORE, kinds, lacking=lacking)
    if counters:
        with _counts_only():
            check_objects(counters, made.counters, COUNTERS, kinds, lacking=lacking)


@contextlib.contextmanager
def _counts_only():
    """A refused counters' file can be left out, and the refusal says so: it holds request
    counts only, and restore makes a new one without it."""
    try:
        yield
    except BackupError as exc:
        raise BackupError(f"{exc} ({COUNTS_ONLY})") from None


def check_sound(path: str, what: str) -> None:
    """SQLite's integrity check, then its foreign key check, over the whole file."""
    try:
        with contextlib.closing(sqlite3.connect(path)) as connection:
            problems = [row[0] for row in connection.execute("PRAGMA integrity_check")]
            broken = connection.execute("PRAGMA foreign_key_check").fetchone()
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{what} fails SQLite's integrity check: {_first_line(exc)}") from None
    if problems != ["ok"]:
        raise BackupError(f"{what} fails SQLite's integrity check: {problems[0]}")
    if broken is not None:
        table, rowid, parent, _ = broken
        raise BackupError(f"{what} fails SQLite's foreign key check: {table} row {rowid} "
                          f"refers to a missing row of {parent}")


def schema_versions(path: str) -> set[int]:
    """The versions the backup's schema_version rows name, each one this rua knows."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        try:
            versions = {row[0] for row in connection.execute("SELECT version FROM schema_version")}
        except sqlite3.DatabaseError:
            versions = set()
    if not versions or not all(isinstance(version, int) for version in versions):
        raise BackupError(f"{STORE} is not a rua backup (it holds no schema version)")
    try:
        refuse_unknown(versions, "the backup's")
    except UnknownSchema as exc:
        raise BackupError(str(exc)) from None
    return versions


def check_objects(path: str, made: frozenset[SchemaObject], what: str, kinds: frozenset[str],
                  *, lacking: bool) -> None:
    """The file's objects of those kinds are the ones rua made (and, with lacking, all of them)."""
    found = {one for one in schema_objects(path) if one.kind in kinds}
    expected = {one for one in made if one.kind in kinds}
    names = {(one.kind, one.name) for one in expected}
    for one in sorted(found - expected, key=lambda one: (one.kind, one.name)):
        if (one.kind, one.name) in names:
            raise BackupError(f"{what} holds {_a(one.kind)} {one.name} unlike the one rua "
                              "creates")
        raise BackupError(f"{what} holds {_a(one.kind)} rua does not create: {one.name}")
    missing = sorted(one.name for one in expected - found)
    if lacking and missing:
        raise BackupError(f"{what} lacks what rua creates: {', '.join(missing)}")


def schema_objects(path: str) -> frozenset[SchemaObject]:
    """The tables, indexes, triggers and views of a SQLite file, but those SQLite makes itself."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        rows = connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        objects = set()
        for kind, name, table, sql in rows:
            automatic_index = (kind == "index" and sql is None
                               and name.startswith("sqlite_autoindex_"))
            if automatic_index or (kind == "table" and name in SQLITE_TABLES):
                continue
            objects.add(SchemaObject(kind, name, table, _shape(connection, kind, name, sql)))
    return frozenset(objects)


def _shape(connection, kind: str, name: str, sql: str | None) -> str:
    """What must match beside the name: the text of a trigger or view, a table's column names
    (in any order: columns added later come last), an index's uniqueness and columns."""
    if kind in CODE:
        return sql or ""
    if kind == "table":
        columns = connection.execute("SELECT name FROM pragma_table_info(?)", (name,))
        return ",".join(sorted(column for (column,) in columns))
    unique = connection.execute("SELECT il.\"unique\" FROM sqlite_master AS m, "
                                "pragma_index_list(m.tbl_name) AS il "
                                "WHERE m.name = ? AND il.name = m.name", (name,)).fetchone()
    columns = connection.execute("SELECT name FROM pragma_index_info(?) ORDER BY seqno", (name,))
    return f"unique={unique[0] if unique else 0}:" + ",".join(str(c) for (c,) in columns)


@functools.lru_cache(maxsize=4)
def made_by_rua(versions: frozenset[int] | None) -> MadeByRua:
    """The objects of a new store that this rua migrated to those versions (None: all)."""
    with tempfile.TemporaryDirectory(prefix="rua-schema-") as folder:
        path = os.path.join(folder, "rua.db")
        migrate_file(path, versions)
        return MadeByRua(schema_objects(path), schema_objects(meter_path(path)))


def migrate_file(path: str, versions: frozenset[int] | None = None) -> list[tuple[int, str]]:
    """Migrate the SQLite store at path and its counters' file, then point the shared proxies
    back at the store they named before."""
    previous = (db.obj, meter.obj)
    database = open_db(f"sqlite:///{path}")
    try:
        with database.connection_context():
            return migrate(database, versions)
    finally:
        meter.obj.close()
        db.initialize(previous[0])
        meter.initialize(previous[1])


def _a(kind: str) -> str:
    return f"an {kind}" if kind == "index" else f"a {kind}"


def _first_line(exc: Exception) -> str:
    return (str(exc).strip() or type(exc).__name__).splitlines()[0]
