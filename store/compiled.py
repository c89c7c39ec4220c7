"""SQL text made once per database kind and run again with fresh values, always bound: the one
SQL-text layer of the store.

Building SQL through peewee costs more than running a small indexed query (GET /reports/{id})
and more than the database work when ingest writes a report of thousands of records; here a
statement's text is made once and kept in one cache. Four ways to write it: Compiled for a query
written with peewee; CompiledRows for a multi-row insert or upsert written with peewee (its row
of marks repeated per row count); statement(), insert_rows and rows_among for the ingest writes
and IN lists peewee builds value by value, where only the models' table and column names,
quoted, enter the text with a `?` per value that this module writes itself; and every statement
written by hand (the metering upserts, the key look-up, SQLite's report version) in `:name` marks,
which run_named() and Prepared turn into positional ones once. What it costs: a statement's text
is only ever built from names and marks, never from a value.
"""
from __future__ import annotations

import functools
import re
import weakref
from itertools import chain

from peewee import (BigIntegerField, CharField, FloatField, ForeignKeyField, IntegerField,
                    TextField, Value)

from store import db, is_postgres

BATCH = 500             # rows per INSERT: far below the parameter limits of SQLite and Postgres
# Fields whose db_value leaves a value of the right Python type as it is (JSON and dates convert).
_AS_IS = (BigIntegerField, CharField, FloatField, ForeignKeyField, IntegerField)
_TEXTS: dict[tuple, object] = {}     # (database kind, statement key) -> its text


def _cached(key, build):
    """What build() makes for key, made once per database kind."""
    key = (type(db.obj), key)
    found = _TEXTS.get(key)
    if found is None:
        found = _TEXTS[key] = build()
    return found


class Compiled:
    """build(**placeholders) returns a peewee query; run(**values) executes its SQL with values."""

    def __init__(self, build):
        self.build = build

    def _compile(self, names):
        marks = {name: f"\x00{name}\x00" for name in names}
        sql, params = self.build(**marks).sql()
        slots = {mark: name for name, mark in marks.items()}
        # Each parameter is either a named value or a constant of the query (e.g. LIMIT 1).
        return sql, [(p in slots if isinstance(p, str) else False, slots.get(p, p)) for p in params]

    def run(self, **values) -> list[tuple]:
        return self.execute(**values).fetchall()

    def execute(self, **values):
        """The cursor of the statement run with values (for one that returns no rows)."""
        names = tuple(sorted(values))
        sql, slots = _cached((self, names), lambda: self._compile(names))
        params = [values[item] if named else item for named, item in slots]
        return db.obj.execute_sql(sql, params)


class CompiledRows:
    """build(rows) returns a peewee query over rows of values (a multi-row insert or upsert);
    run(rows) executes its SQL with rows of values as the database takes them, the one-row
    statement made once."""

    def __init__(self, build):
        self.build = build

    def _one_row(self, width: int):
        """(text before the row, the row of marks, text after it, constant parameters after
        the row's): peewee writes the one-row statement once (hundreds of rows through it
        would cost milliseconds per row count)."""
        texts = [f"\x00{column}\x00" for column in range(width)]
        # converter=False: a mark reaches the SQL's parameters as it is, whatever its column.
        sql, params = self.build([[Value(text, converter=False) for text in texts]]).sql()
        if params[:width] != texts or any(p in texts for p in params[width:]):
            raise ValueError("CompiledRows needs a statement whose row values come first")
        one = "(" + ", ".join([db.param] * width) + ")"
        head, found, tail = sql.partition(" VALUES " + one)
        if not found:
            raise ValueError("CompiledRows needs a multi-row INSERT ... VALUES statement")
        return head + " VALUES ", one, tail, params[width:]

    def run(self, rows: list) -> list[tuple]:
        """The rows the statement returns (RETURNING), or [] when it returns none."""
        if not rows:
            return []
        head, one, tail, constants = _cached((self, len(rows[0])),
                                             lambda: self._one_row(len(rows[0])))
        cursor = db.obj.execute_sql(head + ", ".join([one] * len(rows)) + tail,
                                    [*chain.from_iterable(rows), *constants])
        return cursor.fetchall() if cursor.description else []


def raw_rows(query) -> list[tuple]:
    """A query's rows as the driver returns them (no per-column conversion: hot list pages).
    SQLite gives DATETIME and DATE columns as text, Postgres as datetime and date."""
    sql, params = query.sql()
    return db.obj.execute_sql(sql, params).fetchall()


def name(field) -> str:
    """A column's quoted name."""
    return f'"{field.column_name}"'


def table(model) -> str:
    """A model's quoted table name."""
    return f'"{model._meta.table_name}"'


def statement(key, build) -> str:
    """The SQL text build() writes (with ? for each parameter), in this database's marks."""
    return _cached(key, lambda: build().replace("?", db.param))


def execute(key, build, params=()):
    """Run the statement built by build() (with ? for each parameter); the cursor."""
    return db.execute_sql(statement(key, build), params)


def rows_among(fields, owner, owner_id, key, keys: list) -> list[tuple]:
    """`fields` of the rows whose `owner` column is owner_id and whose `key` is among keys (one
    model's columns), with a ? per key: peewee's work on each value of an IN list costs more
    than the query when the list is long (docs/performance.md)."""
    def build():
        selected = ", ".join(name(f) for f in fields)
        return (f"SELECT {selected} FROM {table(owner.model)} WHERE {name(owner)} = ? "
                f"AND {name(key)} IN ({', '.join(['?'] * len(keys))})")
    tag = ("rows among", *(f.column_name for f in fields), owner.column_name, key.column_name)
    return execute(tag + (len(keys),), build, [owner_id, *keys]).fetchall()


def columns(model) -> list:
    """The model's fields in the order `SELECT *` gives them (model.select() with no fields)."""
    return model._meta.sorted_fields


def values_of(instance, fields) -> list:
    """An unsaved instance's values of fields (defaults filled in), as insert_rows takes them."""
    return [instance.__data__.get(f.name) for f in fields]


def row(model, fields, values):
    """A model instance from a row selected in `fields` order (not dirty: nothing to save)."""
    instance = model(**{f.name: f.python_value(value) for f, value in zip(fields, values)})
    instance._dirty.clear()
    return instance


def converters(fields):
    """Per field, the conversion a value needs before it is bound (None: none)."""
    return [None if isinstance(f, _AS_IS) and not isinstance(f, TextField) else f.db_value
            for f in fields]


def insert_rows(model, fields, rows, *, conflict=(), add=(), take=(), newer=None,
                ignore=False, converted=False, returning=None) -> list:
    """Insert tuples in `fields` order; a row hitting the `conflict` key adds its `add` columns
    and takes its `take` columns if its `newer` column is at least the stored one.

    ignore: a row that conflicts with any unique key is skipped. converted: the values are
    already as the database takes them (JSON as text). returning: a field whose values, of the
    rows inserted, are returned (else nothing is)."""
    if not rows:
        return []
    key = ("insert", model._meta.table_name, *(f.column_name for f in fields), "conflict",
           *(f.column_name for f in conflict), "add", *(f.column_name for f in add),
           "take", *(f.column_name for f in take), newer and newer.column_name, ignore,
           returning and returning.column_name)

    def tail():
        back = f" RETURNING {name(returning)}" if returning is not None else ""
        if ignore:
            return " ON CONFLICT DO NOTHING" + back
        if not conflict:
            return back
        t = table(model)
        sets = [f"{name(f)} = {t}.{name(f)} + excluded.{name(f)}" for f in add]
        if take:
            # Every CASE reads the stored row as it was before this one, newer included.
            later = f"{t}.{name(newer)} <= excluded.{name(newer)}"
            sets += [f"{name(f)} = CASE WHEN {later} THEN excluded.{name(f)} "
                     f"ELSE {t}.{name(f)} END" for f in take]
        keys = ", ".join(name(f) for f in conflict)
        return f" ON CONFLICT ({keys}) DO UPDATE SET {', '.join(sets)}" + back
    head = statement(key + ("head",), lambda: (
        f"INSERT INTO {table(model)} ({', '.join(name(f) for f in fields)}) VALUES "))
    one = statement(key + ("one",), lambda: "(" + ", ".join(["?"] * len(fields)) + ")")
    end = statement(key + ("tail",), tail)
    convert = list(enumerate(converters(fields)))
    plain = converted or all(c is None for _, c in convert)
    returned = []
    for start in range(0, len(rows), BATCH):
        chunk = rows[start:start + BATCH]
        if plain:
            params = list(chain.from_iterable(chunk))
        else:
            params = [value if c is None else c(value) for each in chunk
                      for (_, c), value in zip(convert, each)]
        cursor = db.execute_sql(head + ", ".join([one] * len(chunk)) + end, params)
        if returning is not None:
            returned.extend(value for value, in cursor.fetchall())
    return returned


# Statements written with named values (:name), for the hand-written ones whose values repeat.
_NAMED = re.compile(r"(?<![:\w]):([a-z_]+)")


@functools.lru_cache(maxsize=None)
def positional(statement: str, mark: str = "?") -> tuple[str, tuple[str, ...]]:
    """The statement with each :name as `mark`, and the names in the order they appear."""
    names = tuple(found[1] for found in _NAMED.finditer(statement))
    return _NAMED.sub(mark, statement), names


def run_named(database, statement: str, params: dict):
    """The cursor of a :name statement on the database, its values bound from params."""
    text, names = positional(statement, database.param)
    return database.execute_sql(text, [params[name] for name in names])


class Prepared:
    """A :name statement of every request that Postgres plans once per pooled connection:
    planning such a statement costs more than running it. SQLite runs it as it is.

    Postgres keeps a prepared statement for the connection's life, a rollback included; a
    new connection (the pool's, or one after the server restarted) is prepared again.
    """

    def __init__(self, name: str, statement: str, types: dict[str, str]):
        """types: each parameter's Postgres type, in the order PREPARE numbers them."""
        number = {arg: n for n, arg in enumerate(types, 1)}
        self.statement = statement
        self.types = tuple(types)
        self.prepare = "PREPARE {} ({}) AS {}".format(
            name, ", ".join(types.values()),
            _NAMED.sub(lambda m: f"${number[m[1]]}", statement))
        self.execute = "EXECUTE {} ({})".format(name, ", ".join(["%s"] * len(types)))
        self._ready = weakref.WeakSet()      # the pooled connections that hold it

    def run(self, database, params: dict):
        if not is_postgres():
            return run_named(database, self.statement, params)
        connection = database.connection()
        if connection not in self._ready:
            database.execute_sql(self.prepare)
            self._ready.add(connection)
        return database.execute_sql(self.execute, [params[arg] for arg in self.types])
