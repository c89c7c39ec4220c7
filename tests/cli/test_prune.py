"""rua prune: what retention deletes, said before (--dry-run) and after, and beside an ingest."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time
from datetime import timedelta

import pytest

from store.clock import utcnow
from store.models import Record, Report
from tests.cli.outcome import assert_refused
from tests.factories import make_org
from tests.ingest import xmlbuild
from tests.snapshotter.reports import report_on


@pytest.fixture
def acme(database):
    org = make_org("Acme")
    today = utcnow().date()         # the command prunes against the real clock
    for back in (1, 40, 70):
        report_on(org, "example.com", today - timedelta(days=back), [{"count": 2}, {"count": 1}])
    return org


def test_without_a_retention_nothing_is_deleted(rua, acme):
    result = rua("prune")
    assert (result.exit_code, result.output) == (
        0, "retention is off (RUA_RETENTION_DAYS=0): every record is kept\n")
    assert Record.select().count() == 6


def test_a_dry_run_says_what_would_go_and_deletes_nothing(rua, acme):
    result = rua("prune", "--days", "30", "--dry-run")
    cutoff = (utcnow() - timedelta(days=30)).date().isoformat()
    assert result.exit_code == 0
    assert result.output == (f"would delete 4 records of 2 reports whose period ended before "
                             f"{cutoff}; 2 records kept\n")
    assert Record.select().count() == 6


def test_a_negative_retention_is_refused_before_anything_is_planned(rua, acme, monkeypatch):
    monkeypatch.setenv("RUA_RETENTION_DAYS", "-5")
    assert_refused(rua("prune", "--dry-run"), "RUA_RETENTION_DAYS=-5 must be 0 or more")
    assert Record.select().count() == 6


def test_prune_deletes_and_says_what_it_kept(rua, acme):
    result = rua("prune", "--days", "30")
    assert result.exit_code == 0
    assert result.output.startswith("deleted 4 records of 2 reports whose period ended before ")
    assert "; 2 records kept\n" in result.output
    assert Record.select().count() == 2


def test_help_explains_what_is_kept(rua):
    result = rua("prune", "--help")
    assert "Daily rollups, snapshots, score history, report summaries and events are kept" in \
        " ".join(result.output.split())


RUA = str(pathlib.Path(sys.executable).with_name("rua"))
OLD, NEW, RECORDS = 300, 400, 10       # reports to prune, reports ingested meanwhile, records each


def write_reports(folder: pathlib.Path, prefix: str, count: int, begin: int) -> pathlib.Path:
    folder.mkdir()
    records = [xmlbuild.record(source_ip=f"192.0.2.{n + 1}") for n in range(RECORDS)]
    for n in range(count):
        (folder / f"{prefix}-{n}.xml").write_bytes(xmlbuild.report_bytes(
            records, report_id=f"{prefix}-{n}", begin=begin, end=begin + 86399))
    return folder


@pytest.mark.slow
def test_prune_waits_its_turn_while_another_process_ingests(config, database, tmp_path):
    if not config.is_sqlite:
        pytest.skip("SQLite's one write lock; on Postgres prune and ingest lock rows")
    env = {**os.environ, "RUA_DATABASE_URL": config.database_url,
           "RUA_LOCK_DIR": config.lock_dir, "RUA_OFFLINE": "1"}

    def run(*args):
        return subprocess.run([RUA, *args], env=env, capture_output=True, text=True, timeout=300)
    assert run("org", "create", "Acme").returncode == 0
    old = write_reports(tmp_path / "old", "old", OLD, 1700000000)
    assert run("ingest", "--org", "Acme", str(old)).returncode == 0
    new = write_reports(tmp_path / "new", "new", NEW, int(time.time()) - 2 * 86400)
    log = tmp_path / "ingest.log"
    with open(log, "w") as out:
        ingest = subprocess.Popen([RUA, "ingest", "--org", "Acme", str(new)], env=env,
                                  stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        # Prune starts once ingest stores (had ingest ended first, prune still must succeed).
        while "stored" not in log.read_text() and ingest.poll() is None:
            time.sleep(0.01)
        prune = run("prune", "--days", "30")
        assert ingest.wait(timeout=300) == 0, log.read_text()[-2000:]
    finally:
        if ingest.poll() is None:
            ingest.kill()
            ingest.wait()
    assert prune.returncode == 0, prune.stderr
    assert prune.stdout.startswith(f"deleted {OLD * RECORDS:,} records of {OLD:,} reports ")
    assert Report.select().count() == OLD + NEW
    assert Record.select().count() == NEW * RECORDS
