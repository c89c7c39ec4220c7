"""Multi-row INSERTs with bound parameters, the SQL written once per batch shape.

Peewee builds SQL value by value, which costs more than the database work when a report holds
50,000 records; here only table and column names enter the SQL text, every value is a parameter.
"""
from __future__ import annotations

from peewee import quote

from store import db

BATCH = 500


def insert_rows(model, fields, rows, *, conflict=(), add=()):
    """Insert tuples in `fields` order; a row hitting the `conflict` key adds its `add` columns."""
    name = lambda field: quote((field.column_name,), db.quote)  # noqa: E731
    table = quote((model._meta.table_name,), db.quote)
    head = f"INSERT INTO {table} ({', '.join(name(f) for f in fields)}) VALUES "
    one = "(" + ", ".join([db.param] * len(fields)) + ")"
    tail = ""
    if conflict:
        sums = ", ".join(f"{name(f)} = {table}.{name(f)} + excluded.{name(f)}" for f in add)
        tail = f" ON CONFLICT ({', '.join(name(f) for f in conflict)}) DO UPDATE SET {sums}"
    converters = [f.db_value for f in fields]
    for start in range(0, len(rows), BATCH):
        chunk = rows[start:start + BATCH]
        params = [convert(value) for row in chunk for convert, value in zip(converters, row)]
        db.execute_sql(head + ", ".join([one] * len(chunk)) + tail, params)
