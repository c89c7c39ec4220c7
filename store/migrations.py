"""Versioned schema migrations, applied in order by `rua init` (idempotent).

Version 1 creates the tables as store/models.py declares them. Once a release has shipped,
never edit an applied migration: add the next one (playhouse.migrate's add_column and friends),
so an existing database is upgraded in place without losing data.
"""
from __future__ import annotations

from store.models import MODELS, SchemaVersion


def _initial_schema(database):
    database.create_tables(MODELS, safe=True)


MIGRATIONS = [
    (1, "initial schema", _initial_schema),
]


def current_version(database) -> int:
    if not database.table_exists(SchemaVersion._meta.table_name):
        return 0
    row = SchemaVersion.select().order_by(SchemaVersion.version.desc()).first()
    return row.version if row else 0


def migrate(database) -> list[tuple[int, str]]:
    """Apply every pending migration, each in its own transaction; return those applied."""
    database.create_tables([SchemaVersion], safe=True)
    applied = []
    for version, description, step in MIGRATIONS:
        if version <= current_version(database):
            continue
        with database.atomic():
            step(database)
            SchemaVersion.create(version=version, description=description)
        applied.append((version, description))
    return applied


def latest_version() -> int:
    return MIGRATIONS[-1][0]
