"""rua restore on SQLite takes only what rua backup makes: a backup edited to hold more (a
trigger, a view, a table, an index), less, damaged pages or a newer schema is refused with the
reason, and the place it was to go is left as it was. Each backup is a real one of a real store."""
from __future__ import annotations

import os
import sqlite3

import pytest

from store import meter_path, open_db
from store.backup import BackupError, backup_sqlite, restore_sqlite
from store.backup_checks import COUNTS_ONLY
from store.migrations import MIGRATIONS, latest_version, migrate
from store.models import Organization
from tests.factories import make_key, make_org, make_report, make_usage

ATTACKER = ("CREATE TRIGGER org_owner_key AFTER INSERT ON organization BEGIN "
            "UPDATE organization SET plan = 'enterprise' WHERE id = NEW.id; END")


@pytest.fixture
def sqlite_store(config, database):
    if not config.is_sqlite:
        pytest.skip("rua backup and rua restore copy SQLite files; Postgres uses pg_dump")
    org = make_org("Acme")
    make_key(org)
    make_report(org)
    make_usage(org, hour=1, allowed=3)
    return config.database_url[len("sqlite:///"):]


@pytest.fixture
def backup(sqlite_store, tmp_path):
    """A backup of the store just made, and its counters' file beside it."""
    path = str(tmp_path / "copy.db")
    assert len(backup_sqlite(sqlite_store, path)) == 2
    return path


def edit(path: str, *statements: str) -> None:
    with sqlite3.connect(path) as connection:
        for statement in statements:
            connection.executescript(statement)
    connection.close()


def refused(backup: str, target: str, reason: str) -> None:
    """Restoring is refused with reason, and the target's folder holds what it held."""
    folder = os.path.dirname(target)
    before = sorted(os.listdir(folder)) if os.path.isdir(folder) else None
    with pytest.raises(BackupError) as raised:
        restore_sqlite(backup, target)
    assert str(raised.value) == reason
    assert (sorted(os.listdir(folder)) if os.path.isdir(folder) else None) == before


def test_a_backup_restores_with_its_counters_and_nothing_to_apply(backup, tmp_path):
    target = str(tmp_path / "restored" / "rua.db")
    restored = restore_sqlite(backup, target)
    assert [one.target for one in restored.copied] == [target, meter_path(target)]
    assert restored.applied == []
    assert sorted(os.listdir(tmp_path / "restored")) == ["rua.db", "rua.meter.db"]
    with sqlite3.connect(target) as store, sqlite3.connect(meter_path(target)) as counters:
        assert store.execute("SELECT name FROM organization").fetchall() == [("Acme",)]
        assert counters.execute("SELECT sum(allowed) FROM usage").fetchone()[0] == 3
    assert oct(os.stat(target).st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("statement, reason", [
    (ATTACKER, "the backup holds a trigger rua does not create: org_owner_key"),
    ("CREATE VIEW keys_seen AS SELECT * FROM api_key",
     "the backup holds a view rua does not create: keys_seen"),
    ("CREATE TABLE notes (body TEXT)", "the backup holds a table rua does not create: notes"),
    ("CREATE INDEX report_by_domain ON report (domain)",
     "the backup holds an index rua does not create: report_by_domain"),
    ("ALTER TABLE api_key ADD COLUMN spare TEXT",
     "the backup holds a table api_key unlike the one rua creates"),
    ("DROP INDEX api_key_digest; CREATE INDEX api_key_digest ON api_key (digest)",
     "the backup holds an index api_key_digest unlike the one rua creates"),
    ('DROP INDEX "event_open_org_dedupe_key"',
     "the backup lacks what rua creates: event_open_org_dedupe_key"),
    ("UPDATE schema_version SET version = 99 WHERE version = 1",
     f"the backup's schema version 99 is newer than this rua knows ({latest_version()})"),
    ("DELETE FROM schema_version", "the backup is not a rua backup (it holds no schema version)"),
    ("UPDATE api_key SET member_id = 'gone'",
     ("the backup fails SQLite's foreign key check: api_key row 1 refers to a missing row of "
      "member")),
])
def test_a_backup_edited_after_it_was_made_is_refused(backup, tmp_path, statement, reason):
    edit(backup, statement)
    refused(backup, str(tmp_path / "restored" / "rua.db"), reason)


def test_a_trigger_added_to_the_counters_is_refused_and_they_can_be_left_out(backup, tmp_path):
    edit(meter_path(backup), "CREATE TRIGGER usage_spy AFTER INSERT ON usage BEGIN "
                             "DELETE FROM usage WHERE rowid = NEW.rowid; END")
    refused(backup, str(tmp_path / "new.db"),
            f"the backup's counters file holds a trigger rua does not create: usage_spy "
            f"({COUNTS_ONLY})")
    os.rename(meter_path(backup), str(tmp_path / "away.db"))
    restored = restore_sqlite(backup, str(tmp_path / "new.db"))
    assert [one.target for one in restored.copied] == [str(tmp_path / "new.db")]
    with sqlite3.connect(meter_path(str(tmp_path / "new.db"))) as counters:
        assert counters.execute("SELECT count(*) FROM usage").fetchone()[0] == 0
    counters.close()


def test_rua_s_own_trigger_rewritten_is_refused(backup, tmp_path):
    edit(meter_path(backup), "DROP TRIGGER usage_key_counted",
         "CREATE TRIGGER usage_key_counted AFTER INSERT ON usage BEGIN SELECT 1; END")
    refused(backup, str(tmp_path / "new.db"), "the backup's counters file holds a trigger "
                                              "usage_key_counted unlike the one rua creates "
                                              f"({COUNTS_ONLY})")


def test_a_backup_with_damaged_pages_is_refused(backup, tmp_path):
    with sqlite3.connect(backup) as copy:
        page_size = copy.execute("PRAGMA page_size").fetchone()[0]
        pages = copy.execute("PRAGMA page_count").fetchone()[0]
        assert copy.execute("PRAGMA freelist_count").fetchone()[0] == 0      # every page used
    copy.close()
    with open(backup, "r+b") as file:
        file.seek(pages // 2 * page_size)
        file.write(b"\xff" * page_size * 2)
    with pytest.raises(BackupError, match="^the backup fails SQLite's integrity check: "):
        restore_sqlite(backup, str(tmp_path / "new.db"))
    assert not os.path.exists(tmp_path / "new.db")
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".rua-restore-")]


def test_a_refused_backup_leaves_an_empty_target_file_as_it_was(backup, tmp_path):
    target = tmp_path / "new.db"
    target.write_bytes(b"")
    edit(backup, ATTACKER)
    refused(backup, str(target), "the backup holds a trigger rua does not create: org_owner_key")
    assert target.read_bytes() == b""


def test_a_backup_of_an_older_schema_restores_and_is_brought_up_to_date(config, database,
                                                                         tmp_path):
    if not config.is_sqlite:
        pytest.skip("rua backup and rua restore copy SQLite files; Postgres uses pg_dump")
    older = str(tmp_path / "older" / "rua.db")
    made = open_db(f"sqlite:///{older}")
    with made.connection_context():        # as the release before this one left it
        migrate(made, versions={version for version, _, _ in MIGRATIONS[:-1]})
        make_report(make_org("Older"))
    backup_sqlite(older, str(tmp_path / "copy.db"))
    target = str(tmp_path / "restored.db")
    restored = restore_sqlite(str(tmp_path / "copy.db"), target)
    assert [version for version, _ in restored.applied] == [latest_version()]
    with open_db(f"sqlite:///{target}").connection_context():
        assert [org.name for org in Organization.select()] == ["Older"]
