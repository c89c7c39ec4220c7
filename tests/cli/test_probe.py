"""`rua wait` and `rua health` on the test database: the start order and health checks the
container roles use (compose.yaml)."""
from __future__ import annotations

from datetime import timedelta

from store import job_runs
from store.clock import utcnow
from tests.cli.outcome import assert_refused, ok
from tests.store.scratch import empty_database_url


def test_wait_returns_at_once_on_a_current_schema(rua):
    assert ok(rua("wait", "--timeout", "0"))[0].startswith("store ready at schema version ")


def test_wait_gives_up_in_one_line_on_a_store_without_schema(rua, tmp_path):
    with empty_database_url(tmp_path) as url:
        result = rua("wait", "--timeout", "1", url=url)
    assert result.exit_code == 2 and result.stdout == ""
    said, gave_up = result.stderr.splitlines()
    assert said.startswith("rua wait: ") and "run `rua init`" in said
    assert gave_up.startswith("rua: error: gave up after 1 s: ")


def test_wait_for_the_server_only_takes_a_store_without_schema(rua, tmp_path):
    with empty_database_url(tmp_path) as url:
        lines = ok(rua("wait", "--server", "--timeout", "0", url=url))
    assert lines[0] in ("store ready at schema version 0",
                        "no server to wait for: the store is a SQLite file")


def test_health_without_a_job_checks_the_store(rua):
    assert ok(rua("health")) == ["store ready"]


def test_health_of_a_job_that_never_ran_is_refused(rua):
    assert_refused(rua("health", "--job", "dirty"), "job dirty has not run yet")


def test_health_of_a_job_that_ran_well_lately(rua):
    job_runs.started("dirty", utcnow())
    job_runs.finished("dirty", utcnow(), ok=True)
    [line] = ok(rua("health", "--job", "dirty", "--within", "5"))
    assert line.startswith("job dirty last started at ") and line.endswith(": ok")


def test_health_of_a_failed_or_late_job_is_refused(rua):
    job_runs.started("fetch", utcnow() - timedelta(minutes=30))
    job_runs.finished("fetch", utcnow(), ok=True)
    assert_refused(rua("health", "--job", "fetch", "--within", "10"), "over 10 minutes ago")
    job_runs.started("fetch", utcnow())
    job_runs.finished("fetch", utcnow(), ok=False)
    assert_refused(rua("health", "--job", "fetch"), "last run failed (1 of 2 runs failed)")
