"""Grouped commits: an outcome is handed out only once committed; a killed ingest loses nothing
it reported stored and leaves no report half-stored."""
import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import threading

import psycopg2
import pytest
from peewee import SqliteDatabase, fn

from ingest import commits
from ingest.pipeline import STORE_FAILED, ingest_paths
from store import make_database
from store.encoding import loads
from store.models import DailyRollup, DomainDay, Record, Report, SourceDomain
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild

ROOT = pathlib.Path(__file__).resolve().parents[2]


def write_reports(folder: pathlib.Path, count: int, records: int = 3) -> list[str]:
    """count small report files, each with its own report id and sources."""
    paths = []
    for n in range(count):
        rows = [xmlbuild.record(source_ip=f"198.51.{n % 200}.{r + 1}", count=r + 1,
                                dkim="fail" if r % 2 else "pass", disposition="quarantine"
                                if r % 3 == 2 else "none") for r in range(records)]
        path = folder / f"r{n:04d}.xml"
        path.write_bytes(xmlbuild.report_bytes(rows, report_id=f"r-{n}",
                                               begin=1700000000 + n, end=1700086399 + n))
        paths.append(str(path))
    return paths


def committed_report_ids(url: str) -> set[str]:
    """The report ids another connection sees: what is committed."""
    other = make_database(url)
    try:
        other.connect()
        return {row[0] for row in other.execute_sql('SELECT "report_id" FROM "report"')}
    finally:
        other.close()


def test_each_outcome_is_handed_out_only_once_its_report_is_committed(database, config,
                                                                        tmp_path):
    org = make_org()
    make_domain(org, "example.com")
    paths = write_reports(tmp_path, 12)
    for result in ingest_paths(paths, config=config):
        assert result.status == "stored"
        assert result.reports[0]["report_id"] in committed_report_ids(config.database_url)


def test_small_reports_are_handed_out_in_groups(database, config, tmp_path, monkeypatch):
    monkeypatch.setattr(commits, "COMMIT_SECONDS", 3600.0)
    monkeypatch.setattr(commits, "COMMIT_REPORTS", 5)
    org = make_org()
    make_domain(org, "example.com")
    results = ingest_paths(write_reports(tmp_path, 12), config=config)
    first = next(results)
    seen = committed_report_ids(config.database_url)
    # The first group holds five reports in one transaction: none is handed out before all
    # five are committed.
    assert len(seen) == 5
    assert first.reports[0]["report_id"] in seen
    assert len(list(results)) == 11
    assert len(committed_report_ids(config.database_url)) == 12


def test_a_killed_ingest_keeps_every_report_it_reported_and_none_half_stored(database, config,
                                                                             tmp_path):
    make_org("Acme")
    folder = tmp_path / "in"
    folder.mkdir()
    # Small reports first (grouped and reported as their commits go by), then a large one
    # that keeps the process storing when it is killed.
    paths = write_reports(folder, 400, records=5)
    big = folder / "big.xml"
    big.write_bytes(xmlbuild.report_bytes(
        [xmlbuild.record(source_ip=f"203.0.{n // 250}.{n % 250}") for n in range(30000)],
        report_id="big"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=config.database_url, RUA_OFFLINE="1",
               RUA_LOCK_DIR=str(tmp_path), RUA_MAX_AUTO_DOMAINS="1000")
    rua = pathlib.Path(sys.executable).with_name("rua")
    reported = []
    with subprocess.Popen([str(rua), "ingest", "--org", "Acme", "--format", "json", *paths,
                           str(big)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          cwd=ROOT, env=env) as process:
        for line in process.stdout:
            reported.append(stored_report_id(line))
            if len(reported) >= 10:
                process.send_signal(signal.SIGKILL)
                break
    assert process.returncode == -signal.SIGKILL      # killed mid-run, not finished
    stored = {report_id for (report_id,) in Report.select(Report.report_id).tuples()}
    assert set(reported) <= stored
    assert_nothing_half_stored()


def stored_report_id(line: bytes) -> str:
    result = loads(line)
    assert result["status"] == "stored", result
    return result["reports"][0]["report_id"]


def assert_nothing_half_stored():
    """Every stored report is whole: its records, and the rollups and source facts of them."""
    reports = Report.select().count()
    for report in Report.select():
        records = Record.select().where(Record.report == report.id)
        assert records.count() == report.record_count
        assert sum(r.count for r in records) == report.total_messages
    messages = Record.select(fn.COALESCE(fn.SUM(Record.count), 0)).scalar()
    assert Report.select(fn.COALESCE(fn.SUM(Report.total_messages), 0)).scalar() == messages
    assert DomainDay.select(fn.COALESCE(fn.SUM(DomainDay.reports), 0)).scalar() == reports
    assert DailyRollup.select(fn.COALESCE(fn.SUM(DailyRollup.messages), 0)).scalar() == messages
    assert SourceDomain.select(fn.COALESCE(fn.SUM(SourceDomain.messages), 0)).scalar() == messages


@pytest.mark.parametrize("records", [4, 600])      # 600: its first 500 are written at once
def test_a_report_two_groups_store_at_once_is_kept_once_and_the_later_asks_to_be_read_again(
        database, config, tmp_path, records):
    """Postgres: two ingests hold the same report in their open groups (each looked and found
    nothing); the first commits, then the second, whose report row meets the first's key. The
    second stores nothing of it, neither records nor sums, and refuses it as a store failure
    that asks for it again, which then finds it stored. (SQLite: the second group waits for
    the first's write lock before it looks, as test_storing's race shows.)"""
    if isinstance(database, SqliteDatabase):
        pytest.skip("SQLite's second group waits for the first before it looks")
    org = make_org()
    make_domain(org, "example.com")
    first_path, = write_reports(tmp_path, 1, records=records)
    second_path = tmp_path / "copy.xml"
    second_path.write_bytes(pathlib.Path(first_path).read_bytes())
    first_held, second_held, first_done = (threading.Event(), threading.Event(),
                                           threading.Event())
    results = {}

    def ingest(name, path, held, wait_for):
        def progress(origin, status):
            held.set()              # stored in the open group, not committed yet
            assert wait_for.wait(10)
        with database.connection_context():
            results[name] = list(ingest_paths([path], config=config, progress=progress))

    first = threading.Thread(target=ingest, args=("first", first_path, first_held, second_held))
    second = threading.Thread(target=ingest, args=("second", str(second_path), second_held,
                                                   first_done))
    first.start()
    assert first_held.wait(10)
    second.start()
    first.join(20)
    first_done.set()
    second.join(20)
    assert not first.is_alive() and not second.is_alive()

    assert [r.status for r in results["first"]] == ["stored"]
    later, = results["second"]
    assert later.status == "refused" and later.fault == STORE_FAILED and later.reports == []
    assert "another process stored the same report at the same moment" in later.error
    assert Report.select().count() == 1 and Record.select().count() == records
    assert_nothing_half_stored()
    again, = ingest_paths([str(second_path)], config=config)
    assert again.status == "duplicate"


def test_a_group_the_store_fails_to_take_refuses_its_files_as_store_failures(database, config,
                                                                           tmp_path):
    """Postgres writes a group's report rows at its commit: a lock there past lock_timeout
    refuses the group's files as the store's failure (to be read again), and the run goes on;
    nothing of them is stored."""
    if isinstance(database, SqliteDatabase):
        pytest.skip("SQLite takes the write lock as a group opens, before any report")
    org = make_org()
    make_domain(org, "example.com")
    paths = write_reports(tmp_path, 2)
    with contextlib.closing(psycopg2.connect(config.database_url)) as other:
        other.cursor().execute("LOCK TABLE report IN SHARE MODE")     # inserts wait
        database.execute_sql("SET lock_timeout = 300")
        try:
            results = list(ingest_paths(paths, config=config))
        finally:
            database.execute_sql("SET lock_timeout = 0")
        other.rollback()
    assert [(r.status, r.fault) for r in results] == [("refused", STORE_FAILED)] * 2
    assert all("the store failed (OperationalError: " in r.error for r in results)
    assert Report.select().count() == 0
    assert_nothing_half_stored()
    assert [r.status for r in ingest_paths(paths, config=config)] == ["stored"] * 2


@pytest.mark.parametrize("early", ["a copy", "many records"])
def test_a_group_a_failed_statement_aborted_stores_nothing_and_says_so(database, config,
                                                                     tmp_path, monkeypatch,
                                                                     early):
    """Postgres: a group writes its rows before its commit, outside any report's savepoint, for
    a copy of a report it holds, or once it holds many records; when that write fails (here a
    lock past lock_timeout), the transaction is aborted, and its commit would keep nothing in
    silence: every file of the group is refused as the store's failure instead, and read again
    later, stored once."""
    if isinstance(database, SqliteDatabase):
        pytest.skip("SQLite takes the write lock as a group opens, before any report")
    org = make_org()
    make_domain(org, "example.com")
    first, = write_reports(tmp_path, 1)
    copy = tmp_path / "copy.xml"
    copy.write_bytes(pathlib.Path(first).read_bytes())
    if early == "many records":
        monkeypatch.setattr(commits, "RECORDS_WAITING", 1)
        first, copy = write_reports(tmp_path, 2)
    with contextlib.closing(psycopg2.connect(config.database_url)) as other:
        other.cursor().execute("LOCK TABLE report IN SHARE MODE")     # inserts wait
        database.execute_sql("SET lock_timeout = 300")
        try:
            results = list(ingest_paths([first, str(copy)], config=config))
        finally:
            database.execute_sql("SET lock_timeout = 0")
        other.rollback()
    assert [(r.status, r.fault) for r in results] == [("refused", STORE_FAILED)] * 2
    assert all(any("nothing of this group was stored" in refusal for refusal in r.refusals)
               for r in results)
    assert Report.select().count() == 0
    again = list(ingest_paths([first, str(copy)], config=config))
    assert [r.status for r in again] == (["stored", "duplicate"] if early == "a copy"
                                         else ["stored", "stored"])
