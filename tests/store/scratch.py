"""A store with no schema yet: a new SQLite file, or a throwaway schema in the Postgres test database."""
from __future__ import annotations

import contextlib
import secrets
from urllib.parse import quote

from store import db, make_database
from tests.conftest import POSTGRES_URL


@contextlib.contextmanager
def empty_database_url(tmp_path):
    """Yield a URL whose database has no tables; a Postgres schema is dropped afterwards."""
    if not POSTGRES_URL:
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    schema = f"rua_scratch_{secrets.token_hex(4)}"
    admin = make_database(POSTGRES_URL)
    previous = db.obj
    try:
        with admin.connection_context():
            admin.execute_sql(f'CREATE SCHEMA "{schema}"')
        separator = "&" if "?" in POSTGRES_URL else "?"
        yield f"{POSTGRES_URL}{separator}options={quote(f'-c search_path={schema}')}"
    finally:
        with admin.connection_context():
            admin.execute_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        admin.close_all()
        # Code under test re-pointed the shared proxy; give it back to the test's database.
        if previous is not None:
            db.initialize(previous)
