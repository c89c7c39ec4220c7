"""Statements written once with SQLite's named parameters (:name) and run on either database;
every value travels as a parameter."""
from __future__ import annotations

import functools
import re
import weakref

from store import is_postgres

_PARAMETER = re.compile(r"(?<![:\w]):([a-z_]+)")


@functools.lru_cache(maxsize=None)
def for_postgres(statement: str) -> str:
    """The statement with psycopg2's named placeholders (%(name)s)."""
    return _PARAMETER.sub(r"%(\1)s", statement)


def run(database, statement: str, params: dict):
    """The statement's cursor on the database, its :name parameters bound from params."""
    return database.execute_sql(for_postgres(statement) if is_postgres() else statement, params)


class Prepared:
    """A statement of every request that Postgres plans once per pooled connection: planning
    such a statement costs more than running it. SQLite runs it as it is.

    What it costs to keep correct: PREPARE runs outside any transaction (the request's first
    statement on a connection in autocommit), or a rollback would take it back unnoticed.
    """

    def __init__(self, name: str, statement: str, types: dict[str, str]):
        """types: each parameter's Postgres type, in the order PREPARE numbers them."""
        number = {arg: n for n, arg in enumerate(types, 1)}
        self.statement = statement
        self.prepare = "PREPARE {} ({}) AS {}".format(
            name, ", ".join(types.values()),
            _PARAMETER.sub(lambda m: f"${number[m[1]]}", statement))
        self.execute = "EXECUTE {} ({})".format(name, ", ".join(f"%({arg})s" for arg in types))
        self._ready = weakref.WeakSet()      # the pooled connections that hold it

    def run(self, database, params: dict):
        if not is_postgres():
            return database.execute_sql(self.statement, params)
        connection = database.connection()
        if connection not in self._ready:
            database.execute_sql(self.prepare)
            self._ready.add(connection)
        return database.execute_sql(self.execute, params)
