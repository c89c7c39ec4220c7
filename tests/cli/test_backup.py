"""rua backup and rua restore: a copy taken under load restores to the same API answers."""
from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import subprocess
import sys

import pytest

from store import open_db
from store.backup import backup_sqlite
from store.clock import utcnow
from store.migrations import MIGRATIONS, latest_version, migrate
from store.models import Report
from tests.factories import make_org
from tests.ingest import xmlbuild
from webapp import create_app

RUA = str(pathlib.Path(sys.executable).with_name("rua"))
ROOT = pathlib.Path(__file__).parents[2]
# Stores a new report of organization Busy after another until the stop file appears.
LOADER = """
import pathlib, subprocess, sys
from tests.ingest import xmlbuild
rua, folder, stop = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
n = 0
while not stop.exists():
    path = folder / f"busy-{n}.xml"
    path.write_bytes(xmlbuild.report_bytes([xmlbuild.record(count=n + 1)], report_id=f"busy-{n}",
                                           domain="busy.example"))
    subprocess.run([rua, "ingest", "--org", "Busy", str(path)], check=True,
                   stdout=subprocess.DEVNULL)
    print("stored", n, flush=True)
    n += 1
"""
DOC = json.loads((pathlib.Path(__file__).parents[2] / "webapp" / "openapi.json").read_text())


@pytest.fixture
def sqlite_only(config):
    if not config.is_sqlite:
        pytest.skip("SQLite's online backup; a Postgres store is dumped with pg_dump")


def run(config, *args, url=None, check=True) -> subprocess.CompletedProcess:
    env = {**os.environ, "RUA_DATABASE_URL": url or config.database_url,
           "RUA_LOCK_DIR": config.lock_dir, "RUA_OFFLINE": "1"}
    done = subprocess.run([RUA, *args], env=env, capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def answers(url: str, key: str, report_id: str, clock) -> dict:
    """Every documented GET without a quota (usage moves with each request) for one key."""
    from config import Config
    client = create_app(Config(database_url=url, offline=True), clock=clock).test_client()
    seen = {}
    for path in sorted(DOC["paths"]):
        if "usage" in path or "{ip}" in path:
            continue
        concrete = path.replace("{domain}", "example.com").replace("{id}", report_id)
        response = client.get("/api/v1" + concrete, headers={"Authorization": f"Bearer {key}"})
        seen[concrete] = (response.status_code, response.data)
    return seen


def test_a_backup_taken_while_ingest_runs_restores_to_the_same_answers(config, sqlite_only,
                                                                        tmp_path):
    run(config, "init")
    key = run(config, "demo", "--days", "20").stdout.strip().splitlines()[-1]
    run(config, "snapshot", "--all")
    run(config, "org", "create", "Busy")
    run(config, "domain", "add", "Busy", "busy.example")
    env = {**os.environ, "RUA_DATABASE_URL": config.database_url, "RUA_LOCK_DIR": config.lock_dir,
           "RUA_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    stop = tmp_path / "stop"
    # Load: another organization's reports stored one at a time until the copy is taken.
    loader = subprocess.Popen([sys.executable, "-c", LOADER, RUA, str(tmp_path), str(stop)],
                              env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert loader.stdout.readline().strip() == "stored 0"      # ingest is under way
        copy = tmp_path / "copy.db"
        made = run(config, "backup", str(copy))
    finally:
        stop.touch()
        loader.communicate(timeout=120)
    assert loader.returncode == 0
    assert "copy.meter.db" in made.stdout and oct(copy.stat().st_mode & 0o777) == "0o600"

    restored = f"sqlite:///{tmp_path / 'restored' / 'rua.db'}"
    run(config, "restore", str(copy), url=restored)
    report_id = _demo_report(config)
    now = utcnow()
    before = answers(config.database_url, key, report_id, lambda: now)
    after = answers(restored, key, report_id, lambda: now)
    assert before == after
    assert before["/reports"][0] == 200 and json.loads(before["/reports"][1])["total"] > 0
    assert "Busy" in run(config, "org", "list", url=restored).stdout


def _demo_report(config) -> str:
    from store import open_db
    from store.models import Organization
    database = open_db(config.database_url)
    with database.connection_context():
        demo = Organization.get(Organization.name == "Demo")
        return Report.select(Report.id).where(Report.org == demo).order_by(Report.id).first().id


def test_a_backup_never_overwrites_a_file(config, sqlite_only, tmp_path):
    run(config, "init")
    target = tmp_path / "taken.db"
    target.write_text("precious")
    refused = run(config, "backup", str(target), check=False)
    assert refused.returncode == 2
    assert refused.stderr == f"rua: error: {target} already exists: name a new file\n"
    assert target.read_text() == "precious"


def test_restore_refuses_a_store_that_holds_data_and_changes_nothing(config, sqlite_only,
                                                                      tmp_path):
    run(config, "init")
    run(config, "backup", str(tmp_path / "copy.db"))
    refused = run(config, "restore", str(tmp_path / "copy.db"), check=False)
    assert refused.returncode == 2
    assert "already holds a store: restore only into an empty one" in refused.stderr


def test_restore_refuses_a_file_that_is_not_a_backup(config, sqlite_only, tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("not a database at all, but long enough to have a header" * 20)
    url = f"sqlite:///{tmp_path / 'new.db'}"
    refused = run(config, "restore", str(other), url=url, check=False)
    assert refused.returncode == 2
    assert "is not a SQLite file" in refused.stderr
    assert not (tmp_path / "new.db").exists()


def test_on_postgres_backup_checks_the_server_and_prints_pg_dump_without_the_password(config):
    if config.is_sqlite:
        pytest.skip("Postgres only")
    run(config, "init")
    done = run(config, "backup", "/srv/rua.dump")
    assert "pg_dump --format=custom --file=/srv/rua.dump --dbname=postgresql://" in done.stdout
    from urllib.parse import urlsplit
    password = urlsplit(config.database_url).password
    assert password is None or password not in done.stdout


@pytest.mark.parametrize("statement, reason", [
    (("CREATE TRIGGER org_owner_key AFTER INSERT ON organization BEGIN "
      "UPDATE organization SET plan = 'enterprise' WHERE id = NEW.id; END"),
     "the backup holds a trigger rua does not create: org_owner_key"),
    ("UPDATE schema_version SET version = 99 WHERE version = 1",
     f"the backup's schema version 99 is newer than this rua knows ({latest_version()})"),
])
def test_restore_refuses_an_edited_backup_in_one_line_and_writes_nothing(config, sqlite_only,
                                                                         tmp_path, statement,
                                                                         reason):
    run(config, "init")
    copy = tmp_path / "copy.db"
    run(config, "backup", str(copy))
    with sqlite3.connect(copy) as edited:
        edited.execute(statement)
    edited.close()
    target = tmp_path / "restored"
    refused = run(config, "restore", str(copy), url=f"sqlite:///{target}/rua.db", check=False)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == f"rua: error: {reason}\n"
    assert not target.exists()
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".rua-restore-")]


def test_a_backup_of_the_release_before_restores_then_init_has_nothing_to_apply(config,
                                                                                sqlite_only,
                                                                                tmp_path):
    # As the release before this one made its store and `rua backup` copied it.
    older = tmp_path / "older.db"
    made = open_db(f"sqlite:///{older}")
    with made.connection_context():
        migrate(made, versions={version for version, _, _ in MIGRATIONS[:-1]})
        make_org("Older")
    backup_sqlite(str(older), str(tmp_path / "copy.db"))
    restored = f"sqlite:///{tmp_path / 'restored.db'}"
    done = run(config, "restore", str(tmp_path / "copy.db"), url=restored)
    assert done.stdout.splitlines()[-1].startswith(f"applied migration {latest_version()}: ")
    assert run(config, "init", url=restored).stdout.startswith("nothing to apply\n")
    assert "Older" in run(config, "org", "list", url=restored).stdout
