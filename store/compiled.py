"""Queries written once with peewee and turned into SQL once per database dialect.

Building SQL from peewee expressions costs more than running a small indexed query; the hot
paths (GET /reports/{id}) reuse the text and only bind fresh values (always as parameters).
"""
from __future__ import annotations

from store import db


class Compiled:
    """build(**placeholders) returns a peewee query; run(**values) executes its SQL with values."""

    def __init__(self, build):
        self.build = build
        self._by_dialect: dict = {}

    def _compile(self, names):
        marks = {name: f"\x00{name}\x00" for name in names}
        sql, params = self.build(**marks).sql()
        slots = {mark: name for name, mark in marks.items()}
        # Each parameter is either a named value or a constant of the query (e.g. LIMIT 1).
        return sql, [(p in slots if isinstance(p, str) else False, slots.get(p, p)) for p in params]

    def run(self, **values) -> list[tuple]:
        database = db.obj
        key = (type(database), tuple(sorted(values)))
        compiled = self._by_dialect.get(key)
        if compiled is None:
            compiled = self._by_dialect[key] = self._compile(values)
        sql, slots = compiled
        params = [values[item] if named else item for named, item in slots]
        return database.execute_sql(sql, params).fetchall()


def raw_rows(query) -> list[tuple]:
    """A query's rows as the driver returns them (no per-column conversion: hot list pages).
    SQLite gives DATETIME and DATE columns as text, Postgres as datetime and date."""
    sql, params = query.sql()
    return db.obj.execute_sql(sql, params).fetchall()
