"""Each scheduled run is recorded: when it started and ended, and how, for /readyz."""
from __future__ import annotations

from datetime import datetime, timezone

import threading

import pytest

from store import locks
from jobs.scheduler import run_exclusive
from store import job_runs

NOON = datetime(2026, 11, 26, 12, 0, 0, tzinfo=timezone.utc)


def utc(moment: datetime) -> datetime:
    """The store gives UTC back naive on SQLite and aware on Postgres."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def test_a_run_that_ends_well_is_recorded_with_its_start_and_end(config, database):
    times = iter([NOON, NOON.replace(second=1), NOON.replace(second=9)])
    assert run_exclusive("dirty", lambda now: None, config, clock=lambda: next(times)) is True
    [run] = job_runs.last_runs()
    assert (run.name, run.ok, run.runs, run.failures) == ("dirty", True, 1, 0)
    assert (utc(run.started_at), utc(run.finished_at)) == (NOON, NOON.replace(second=9))


def test_a_failed_run_is_recorded_as_failed_and_the_error_still_raised(config, database):
    def broken(now):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        run_exclusive("dns", broken, config)
    run_exclusive("dns", lambda now: None, config)
    [run] = job_runs.last_runs()
    assert (run.name, run.ok, run.runs, run.failures) == ("dns", True, 2, 1)


def test_a_run_skipped_for_another_holder_is_not_recorded(config, database):
    with locks.exclusive("job.notify", config.lock_dir) as held:
        assert held
        result = []
        thread = threading.Thread(
            target=lambda: result.append(run_exclusive("notify", lambda now: None, config)))
        thread.start()
        thread.join()
    assert result == [False]
    assert job_runs.last_runs() == []
