"""The scheduler through the soak's faults, on Postgres: a scheduler killed in the middle of a
job lets go of its lock (the other runs the job next), after a Postgres restart the same
process runs its next job well, and a run Postgres was down for runs as soon as it is back."""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from config import Config
from jobs.scheduler import run_exclusive, run_scheduled
from store import db, job_runs, locks, open_db
from tests import postgres_cluster
from tests.conftest import POSTGRES_URL

# A scheduler in the middle of a long job: run_exclusive holding the job's lock, as
# `rua scheduler` runs every job.
MID_JOB = """
import sys, time
from config import Config
from jobs.scheduler import run_exclusive, run_scheduled
from store import open_db
open_db(sys.argv[1])
print("running", flush=True)
run_exclusive("dirty", lambda now: time.sleep(600), Config(database_url=sys.argv[1]))
"""


@pytest.fixture(scope="module")
def cluster():
    yield from postgres_cluster.for_test()


def held_by_another_session(name: str) -> bool:
    """Whether another session holds rua's advisory lock `name` (read from pg_locks: trying the
    lock here could take it before the other session does)."""
    key = locks._int4(name) % 2**32                 # pg_locks shows the int4 key as an oid
    return bool(db.execute_sql(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
        "AND classid = %s AND objid = %s AND pid <> pg_backend_pid() AND database = "
        "(SELECT oid FROM pg_database WHERE datname = current_database())",
        (locks.NAMESPACE, key)).fetchone()[0])


def held_by_another_session_within(name: str, timeout: float = 60, held: bool = True) -> bool:
    """Whether the lock is held by another session (held=False: by none) at some moment
    within timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if held_by_another_session(name) == held:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not POSTGRES_URL, reason="advisory locks: Postgres only")
def test_a_scheduler_killed_mid_job_lets_go_of_the_job_for_the_other(database, config):
    child = subprocess.Popen([sys.executable, "-c", MID_JOB, config.database_url],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "running\n"
        assert held_by_another_session_within("job.dirty")
        assert run_exclusive("dirty", lambda now: None, config) is False   # skipped: held
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
    # Its server process ends once it notices the connection gone, a moment after the kill.
    assert held_by_another_session_within("job.dirty", held=False)
    ran = []
    assert run_exclusive("dirty", ran.append, config) is True
    assert len(ran) == 1 and job_runs.last_runs()[0].ok


def test_the_next_job_after_a_postgres_restart_runs_well_in_the_same_process(
        cluster, tmp_path):
    config = Config(database_url=cluster.url("rua"), lock_dir=str(tmp_path))
    open_db(config.database_url)
    ran = []
    assert run_exclusive("dirty", ran.append, config) is True
    cluster.stop("fast")
    cluster.start()
    assert run_exclusive("dirty", ran.append, config) is True
    assert len(ran) == 2
    with db.connection_context():
        assert [(r.name, r.ok, r.runs, r.failures) for r in job_runs.last_runs()] == \
            [("dirty", True, 2, 0)]
    db.obj.close_all()


def test_a_run_met_by_a_stopped_postgres_runs_once_it_answers_not_at_the_next_trigger(
        cluster, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="rua.scheduler")
    config = Config(database_url=cluster.url("rua"), lock_dir=str(tmp_path))
    open_db(config.database_url)
    ran = []
    run_scheduled("notify", ran.append, config)         # the pool keeps a connection
    cluster.stop("fast")
    run = threading.Thread(target=run_scheduled, args=("notify", ran.append, config))
    run.start()
    deadline = time.monotonic() + 30
    while "the store failed" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "job notify: the store failed (" in caplog.text and len(ran) == 1
    cluster.start()
    run.join(timeout=60)
    assert not run.is_alive() and len(ran) == 2
    assert "job notify: the store answers again after " in caplog.text
    with db.connection_context():
        assert [(r.name, r.ok, r.runs, r.failures) for r in job_runs.last_runs()
                if r.name == "notify"] == [("notify", True, 2, 0)]
    db.obj.close_all()
