"""Versioned schema migrations, applied in order by `rua init` (idempotent).

Version 1 creates the tables as store/models.py declares them; version 2 moves a SQLite
store's request counters into their own file (store/__init__.py says why); version 3 drops two
record indexes that others cover; version 4 keys the counters by (organization, hour, key). Once a release has shipped,
never edit an applied migration: add the next one (playhouse.migrate's add_column and friends),
so an existing database is upgraded in place without losing data.
"""
from __future__ import annotations

from store import is_postgres, meter
from store.models import MODELS, SchemaVersion, Usage


def _initial_schema(database):
    # The counters are version 2's.
    database.create_tables([m for m in MODELS if m is not Usage], safe=True)


def _create_counters() -> None:
    """The counters' table. On SQLite it is clustered on its key (WITHOUT ROWID): each request
    reads and writes one b-tree where a rowid table and its unique index made two (with 4
    processes metering at once, about 15% less CPU a request, measured in process). peewee
    writes that clause for any database, so it is asked for on SQLite only."""
    Usage._meta.without_rowid = not is_postgres()
    try:
        Usage.create_table(safe=True)
    finally:
        Usage._meta.without_rowid = False


def _counters_in_their_own_file(database):
    """The counters' table. Stores made before version 2 had a rowid
    table with indexes: SQLite's, in the store's file, is copied to the counters' file and
    dropped there; Postgres's is reshaped in place."""
    table = Usage._meta.table_name
    if is_postgres():
        if table in database.get_tables():
            _rekey_postgres_counters(database)
        _create_counters()
        return
    legacy = table in database.get_tables()
    _create_counters()
    if not legacy:
        return
    fields = Usage._meta.sorted_fields
    names = ", ".join(f.column_name for f in fields)
    rows = database.execute_sql(f'SELECT {names} FROM "{table}"').fetchall()
    with meter.atomic():
        for start in range(0, len(rows), 500):
            Usage.insert_many(rows[start:start + 500], fields=fields).on_conflict_ignore().execute()
    database.execute_sql(f'DROP TABLE "{table}"')


def _rekey_postgres_counters(database):
    """Version 1's Postgres table: an id, a foreign key and three indexes, to the one key."""
    if "id" not in {column.name for column in database.get_columns("usage")}:
        return
    for statement in ('ALTER TABLE "usage" DROP COLUMN id',          # and its primary key
                      'ALTER TABLE "usage" DROP CONSTRAINT IF EXISTS usage_org_id_fkey',
                      'ALTER TABLE "usage" ADD PRIMARY KEY (org_id, key_id, hour)',
                      'DROP INDEX IF EXISTS usage_org_id',
                      'DROP INDEX IF EXISTS usage_org_id_hour',
                      'DROP INDEX IF EXISTS usage_org_id_key_id_hour'):
        database.execute_sql(statement)


def _record_indexes_covered_by_others(database):
    """record(report_id) and record(org_id) lead (report_id, ordinal) and (org_id, source_ip)."""
    for name in ("record_report_id", "record_org_id"):
        database.execute_sql(f'DROP INDEX IF EXISTS "{name}"')


COUNTER_KEY = ("org_id", "hour", "key_id")


def _counter_key() -> tuple[str, ...]:
    """The counters' primary key columns, in key order (() when there is no table yet)."""
    if is_postgres():
        rows = meter.execute_sql(
            """SELECT a.attname FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
               WHERE i.indrelid = to_regclass('"usage"') AND i.indisprimary
               ORDER BY array_position(i.indkey::int2[], a.attnum)""").fetchall()
        return tuple(name for name, in rows)
    rows = meter.execute_sql('PRAGMA table_info("usage")').fetchall()
    return tuple(row[1] for row in sorted((r for r in rows if r[5]), key=lambda r: r[5]))


def _counters_keyed_by_hour(database):
    """Counters keyed (org, hour, key) instead of (org, key, hour): an organization's hour,
    the sum that metering checks on SQLite, is then one short range of the key."""
    key = _counter_key()
    if not key or key == COUNTER_KEY:
        return
    if is_postgres():
        name, = meter.execute_sql(
            """SELECT conname FROM pg_constraint
               WHERE conrelid = '"usage"'::regclass AND contype = 'p'""").fetchone()
        meter.execute_sql(f'ALTER TABLE "usage" DROP CONSTRAINT "{name}"')
        meter.execute_sql(f'ALTER TABLE "usage" ADD PRIMARY KEY ({", ".join(COUNTER_KEY)})')
        return
    # SQLite cannot re-key a table: the rows move into a new one.
    names = ", ".join(f.column_name for f in Usage._meta.sorted_fields)
    with meter.atomic():
        meter.execute_sql('ALTER TABLE "usage" RENAME TO "usage_v3"')
        _create_counters()
        meter.execute_sql(f'INSERT INTO "usage" ({names}) SELECT {names} FROM "usage_v3"')
        meter.execute_sql('DROP TABLE "usage_v3"')


MIGRATIONS = [
    (1, "initial schema", _initial_schema),
    (2, "request counters keyed by org, key and hour, in their own file on SQLite",
     _counters_in_their_own_file),
    (3, "record indexes covered by others dropped", _record_indexes_covered_by_others),
    (4, "request counters keyed by org, hour and key", _counters_keyed_by_hour),
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
    # The counters' file can be lost or replaced on its own (it holds counts only).
    _create_counters()
    return applied


def latest_version() -> int:
    return MIGRATIONS[-1][0]
