"""A store's schema versions: ones this rua has no migration for are refused before anything
changes, and a store can be migrated to some versions only (as a backup of an older one)."""
from __future__ import annotations

import pytest

from store import open_db
from store.migrations import (MIGRATIONS, UnknownSchema, applied_versions, latest_version,
                              migrate, refuse_unknown)
from store.models import SchemaVersion
from tests.store.scratch import empty_database_url

KNOWN = {version for version, _, _ in MIGRATIONS}


@pytest.mark.parametrize("versions", [set(), {1}, KNOWN])
def test_versions_this_rua_has_pass(versions):
    refuse_unknown(versions)


@pytest.mark.parametrize("versions, reason", [
    (KNOWN | {99}, "the store's schema version 99 is newer than this rua knows"),
    ({1, -1}, "the store's schema version -1 is not one this rua knows"),
])
def test_versions_this_rua_lacks_are_named(versions, reason):
    with pytest.raises(UnknownSchema, match=reason):
        refuse_unknown(versions)


def test_migrate_refuses_a_newer_store_and_applies_nothing(database):
    SchemaVersion.delete().where(SchemaVersion.version == latest_version()).execute()
    SchemaVersion.create(version=99, description="made by a newer rua")
    try:
        with pytest.raises(UnknownSchema, match=f"newer than this rua knows \\({latest_version()}\\)"):
            migrate(database)
        assert applied_versions(database) == KNOWN - {latest_version()} | {99}
    finally:
        SchemaVersion.delete().where(SchemaVersion.version == 99).execute()
        migrate(database)


def test_a_store_migrated_to_some_versions_holds_those_only(tmp_path):
    with empty_database_url(tmp_path) as url:
        database = open_db(url)
        with database.connection_context():
            applied = migrate(database, versions={1, 2, 3})
            assert [version for version, _ in applied] == [1, 2, 3]
            assert applied_versions(database) == {1, 2, 3}
            assert [version for version, _ in migrate(database)] == sorted(KNOWN - {1, 2, 3})
        if hasattr(database, "close_all"):
            database.close_all()
