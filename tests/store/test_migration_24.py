"""Migration 24: reports' indexes by database. SQLite keeps one per sort and filter; Postgres
fewer and narrower ones. A store made before it ends with the indexes of a new store."""
from __future__ import annotations

import re

from store import migrations
from tests.store.test_models import empty_database, migrate_up_to  # noqa: F401 - the fixture

BOTH = {"report_org_id_dedupe_key", "report_org_id_date_end_id",
        "report_org_id_total_messages_id", "report_org_id_compliance_rate_id",
        "report_org_lower_org_name_id", "report_org_id_day_begin", "report_org_id_day_end"}
ON_SQLITE = BOTH | {"report_org_rowid", "report_org_id_received_at_id", "report_org_id_domain_id",
                    "report_org_lower_report_id_id", "report_org_domain_date_end_id",
                    "report_org_id_org_name_id", "report_failing_org_domain_compliance_rate_id"}
ON_POSTGRES = BOTH | {"report_org_id_received_at", "report_org_lower_report_id",
                      "report_org_domain_date_end"}
# The report indexes of a store at version 23 that a new store no longer has on both databases,
# as version 1 made them.
UNREAD = {"report_org_id_report_id_id": '("org_id", "report_id", "id")'}


def is_postgres(database) -> bool:
    return "postgres" in type(database).__name__.lower()


def report_indexes(database) -> dict[str, str]:
    """The report table's indexes but its primary key's: name and definition."""
    found = {}
    for index in database.get_indexes("report"):
        if index.columns == ["id"] and index.unique:
            continue
        # Postgres names the index's schema (a scratch store's own); SQLite keeps the text given.
        found[index.name] = re.sub(r" ON \S+\.", " ON ", index.sql.replace("IF NOT EXISTS ", ""))
    return found


def test_each_database_has_its_own_report_indexes(database):
    expected = ON_POSTGRES if is_postgres(database) else ON_SQLITE
    assert set(report_indexes(database)) == expected


def test_a_store_made_before_version_24_ends_with_a_new_stores_indexes(database, empty_database,  # noqa: F811
                                                                        monkeypatch):
    migrate_up_to(empty_database, 23, monkeypatch)
    # As version 1 made them: every report index SQLite keeps, on either database.
    migrations.create_indexes(empty_database, migrations.REPORT_INDEXES["sqlite"])
    for name, columns in UNREAD.items():
        empty_database.execute_sql(f'CREATE INDEX "{name}" ON "report" {columns}')
    assert set(UNREAD) <= set(report_indexes(empty_database))
    assert migrations.migrate(empty_database)[0] == (24, migrations.described(
        24, "report indexes by database: on Postgres fewer and narrower"))
    assert report_indexes(empty_database) == report_indexes(database)


def test_it_runs_again_without_harm(database):
    before = report_indexes(database)
    with database.atomic():
        migrations._report_indexes(database)
    assert report_indexes(database) == before
