"""SQL for the ingest hot path: texts written once per shape, every value a bound parameter.

Peewee builds SQL value by value, which costs more than the database work when a report holds
50,000 records or a batch holds hundreds of small reports; here only table and column names from
the models enter the SQL text (quoted), every value is a parameter.
"""
from __future__ import annotations

from itertools import chain

from peewee import (BigIntegerField, CharField, FloatField, ForeignKeyField, IntegerField,
                    TextField)

from store import db

BATCH = 500
# Fields whose db_value leaves a value of the right Python type as it is (JSON and dates convert).
_AS_IS = (BigIntegerField, CharField, FloatField, ForeignKeyField, IntegerField)
_texts: dict[tuple, str] = {}


def name(field) -> str:
    """A column's quoted name."""
    return f'"{field.column_name}"'


def table(model) -> str:
    return f'"{model._meta.table_name}"'


def text(key, build) -> str:
    """The SQL text for key, built once per database kind with its parameter marker."""
    key = (db.param, key)
    found = _texts.get(key)
    if found is None:
        found = _texts[key] = build().replace("?", db.param)
    return found


def execute(key, build, params=()):
    """Run the statement built by build() (with ? for each parameter); the cursor."""
    return db.execute_sql(text(key, build), params)


def row(model, fields, values):
    """A model instance from a row selected in `fields` order (not dirty: nothing to save)."""
    instance = model(**{f.name: f.python_value(value) for f, value in zip(fields, values)})
    instance._dirty.clear()
    return instance


def converters(fields):
    """Per field, the conversion a value needs before it is bound (None: none)."""
    return [None if isinstance(f, _AS_IS) and not isinstance(f, TextField) else f.db_value
            for f in fields]


def insert_rows(model, fields, rows, *, conflict=(), add=(), ignore=False, converted=False):
    """Insert tuples in `fields` order; a row hitting the `conflict` key adds its `add` columns.

    ignore: a row that conflicts with any unique key is skipped. converted: the values are
    already as the database takes them (JSON as text)."""
    if not rows:
        return
    key = ("insert", model._meta.table_name, *(f.column_name for f in fields), "conflict",
           *(f.column_name for f in conflict), "add", *(f.column_name for f in add), ignore)

    def tail():
        if ignore:
            return " ON CONFLICT DO NOTHING"
        if not conflict:
            return ""
        sums = ", ".join(f"{name(f)} = {table(model)}.{name(f)} + excluded.{name(f)}" for f in add)
        return f" ON CONFLICT ({', '.join(name(f) for f in conflict)}) DO UPDATE SET {sums}"
    head = text(key + ("head",), lambda: (
        f"INSERT INTO {table(model)} ({', '.join(name(f) for f in fields)}) VALUES "))
    one = text(key + ("one",), lambda: "(" + ", ".join(["?"] * len(fields)) + ")")
    end = text(key + ("tail",), tail)
    convert = list(enumerate(converters(fields)))
    plain = converted or all(c is None for _, c in convert)
    for start in range(0, len(rows), BATCH):
        chunk = rows[start:start + BATCH]
        if plain:
            params = list(chain.from_iterable(chunk))
        else:
            params = [value if c is None else c(value) for row in chunk
                      for (_, c), value in zip(convert, row)]
        db.execute_sql(head + ", ".join([one] * len(chunk)) + end, params)
