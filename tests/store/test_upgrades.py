"""Every released schema upgrades in place: a store made and filled by the release that had it,
then `rua init` of this one, answers the API with the data it held; `rua restore` takes it.

Each past store is made by that release's own code (its tree taken from the repository's
history with git archive), so its schema is exactly what its migrations built.
"""
from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import subprocess
import sys

import pytest

from config import Config
from store import meter_path
from store.migrations import latest_version
from webapp import create_app

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUA = str(pathlib.Path(sys.executable).with_name("rua"))
DOC = json.loads((ROOT / "webapp" / "openapi.json").read_text())
# (schema version, the last commit at which it was the newest): one store per released schema.
RELEASES = [(1, "d86f4dd"), (2, "46fd893"), (3, "f471bf8"), (4, "30e905b"), (5, "e54d000"),
            (6, "0dceb58"), (7, "1d4a23a"), (8, "61faee3"), (9, "a7691a0")]

pytestmark = pytest.mark.slow


def _has_history() -> bool:
    found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", "d86f4dd^{commit}"],
                           capture_output=True)
    return found.returncode == 0


@pytest.fixture
def sqlite_store(config):
    if not config.is_sqlite:
        pytest.skip("past releases make their stores on SQLite here; on Postgres the suite runs "
                    "the same migration functions from an empty database")
    if not _has_history():
        pytest.skip("the repository's history is not here (a shallow clone or an archive)")


def old_rua(tree: pathlib.Path, env: dict, *args: str) -> str:
    """Run a past release's `rua` from its own tree, with today's installed libraries."""
    done = subprocess.run([sys.executable, "-c", "from cli import main; main()", *args],
                          cwd=tree, env={**env, "PYTHONPATH": str(tree)}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def restore(backup: pathlib.Path, env: dict, into: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([RUA, "restore", str(backup)], capture_output=True, text=True,
                          env={**env, "RUA_DATABASE_URL": f"sqlite:///{into}"}, timeout=300)


@pytest.mark.parametrize("version, commit", RELEASES)
def test_a_store_of_every_released_schema_upgrades_and_answers(sqlite_store, tmp_path, version,
                                                               commit):
    tree = tmp_path / "release"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    store_path = tmp_path / "rua.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=f"sqlite:///{store_path}", RUA_LOCK_DIR=str(tmp_path),
               RUA_OFFLINE="1")
    old_rua(tree, env, "init")
    key = old_rua(tree, env, "demo", "--days", "3").strip().splitlines()[-1]
    with sqlite3.connect(store_path) as made:
        assert made.execute("SELECT max(version) FROM schema_version").fetchone()[0] == version
        reports = made.execute("SELECT count(*) FROM report").fetchone()[0]
    assert reports > 0

    # The release's store taken as a backup (it is one: no process has it open) restores, its
    # objects being those rua's migrations made, and is brought up to date on the way.
    restored = restore(store_path, env, tmp_path / "new.db")
    if version == 2:
        # That release's counters table kept its rowid and indexes, which no later migration
        # reshapes: the refusal says the counts can be left out, and without them it restores.
        assert "counters file holds an index rua does not create" in restored.stderr
        counters = pathlib.Path(meter_path(str(store_path)))
        counters.rename(tmp_path / "counts.db")
        restored = restore(store_path, env, tmp_path / "new.db")
        (tmp_path / "counts.db").rename(counters)
    assert restored.returncode == 0, restored.stderr
    assert f"applied migration {latest_version()}: " in restored.stdout

    upgraded = subprocess.run([RUA, "init"], env=env, capture_output=True, text=True, timeout=300)
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"schema version {latest_version()}" in upgraded.stdout

    app = create_app(Config(database_url=env["RUA_DATABASE_URL"], offline=True,
                            lock_dir=str(tmp_path)))
    client = app.test_client()
    auth = {"Authorization": f"Bearer {key}"}
    listed = client.get("/api/v1/reports?limit=1", headers=auth)
    assert listed.status_code == 200
    assert json.loads(listed.data)["total"] == reports
    # Stored before rua checked report mail's signatures: every one unchecked.
    with sqlite3.connect(store_path) as upgraded_store:
        assert upgraded_store.execute("SELECT DISTINCT authenticity FROM report").fetchall() == [
            ("unchecked",)]
    assert json.loads(listed.data)["reports"][0]["authenticity"] == "unchecked"
    report_id = json.loads(listed.data)["reports"][0]["id"]
    for path in sorted(DOC["paths"]):
        if "{ip}" in path or path == "/tls-reports/{id}":      # no TLS report before 12
            continue
        concrete = path.replace("{domain}", "example.com").replace("{id}", report_id)
        answer = client.get("/api/v1" + concrete, headers=auth)
        assert answer.status_code == 200, (concrete, answer.data[:300])
