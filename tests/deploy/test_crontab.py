"""deploy/crontab.example: one line per job of jobs/table.py, each run as cron runs it, against
a throwaway store."""
from __future__ import annotations

import pathlib
import re
import subprocess
from datetime import timedelta

import pytest

from jobs.table import JOBS
from store import locks, snapshots
from store.clock import utcnow
from store.models import Organization, Record
from tests.factories import make_domain, make_org
from tests.intake.conftest import Box, imap_server, report_mail  # noqa: F401 (a fixture)
from tests.snapshotter.reports import TODAY, report_on

ROOT = pathlib.Path(__file__).resolve().parents[2]
CRONTAB = ROOT / "deploy" / "crontab.example"
FIELD = re.compile(r"^(\*|\d+(-\d+)?(,\d+(-\d+)?)*)(/\d+)?$")
RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))


def parse() -> tuple[dict[str, str], list[tuple[list[str], str]]]:
    """The crontab's variables and its jobs as (five schedule fields, command)."""
    variables, jobs = {}, []
    for line in CRONTAB.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        assignment = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", line.strip())
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
            continue
        fields = line.split(None, 5)
        jobs.append((fields[:5], fields[5]))
    return variables, jobs


def command_of(word: str) -> str:
    [command] = [c for _, c in parse()[1] if word in c]
    return command


def line_of(job) -> tuple[list[str], str]:
    """The crontab line of a job: `rua scheduler --once JOB` on the job's cron schedule, a job
    that needs a setting guarded by a test that one of them is set."""
    run = f".venv/bin/rua scheduler --once {job.name} >> $STATE_DIR/jobs.log 2>&1"
    if job.needs:
        unset = "".join(f"$RUA_{field.upper()}" for field in job.needs)
        run = f'{{ [ -z "{unset}" ] || {run}; }}'
    return job.cron.split(), f"cd $APP_DIR && set -a && . $ENV_FILE && set +a && {run}"


def test_the_lines_are_the_job_tables_jobs_in_its_order():
    assert parse()[1] == [line_of(job) for job in JOBS]


def test_the_schedules_are_valid_and_commands_avoid_crons_percent_sign():
    variables, jobs = parse()
    assert set(variables) == {"SHELL", "APP_DIR", "STATE_DIR", "ENV_FILE"}
    assert not any(name.startswith("RUA_") for name in variables)   # rua would refuse them
    for fields, command in jobs:
        for field, (low, high) in zip(fields, RANGES):
            assert FIELD.match(field), field
            assert all(low <= int(n) <= high for n in re.findall(r"(?<!/)\b\d+", field)), field
        assert "%" not in command      # cron turns % into a newline


@pytest.fixture
def cron(database, config, tmp_path):
    """Run a crontab command as cron does: sh -c, cron's PATH, the file's variables pointed at
    this checkout, a throwaway state folder and an env file naming the test's store."""
    state = tmp_path / "state"
    state.mkdir()
    env_file = tmp_path / "rua.env"
    settings = {"RUA_DATABASE_URL": config.database_url, "RUA_LOCK_DIR": str(state),
                "RUA_OFFLINE": "1"}

    def run(command: str, **more: str) -> subprocess.CompletedProcess:
        env_file.write_text("".join(f"{k}={v}\n" for k, v in {**settings, **more}.items()))
        variables = parse()[0]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LOGNAME": "rua",
               **variables, "APP_DIR": str(ROOT), "STATE_DIR": str(state),
               "ENV_FILE": str(env_file)}
        return subprocess.run([variables["SHELL"], "-c", command], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    run.state = state
    return run


@pytest.mark.parametrize("job", ["dirty", "health", "daily"])
def test_each_snapshot_line_refreshes_and_logs(cron, job):
    org = make_org("Acme")
    report_on(org, "example.com", TODAY, [{"count": 3}])
    result = cron(command_of(f"--once {job} "))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    log = (cron.state / "jobs.log").read_text()
    assert log.strip().endswith(f"job {job} done"), log
    assert "Traceback" not in log
    assert snapshots.get(org.id, "health", "example.com") is not None


def test_a_line_whose_previous_run_still_holds_its_lock_skips(cron):
    org = make_org("Acme")
    report_on(org, "example.com", TODAY, [{"count": 3}])
    with locks.exclusive("job.dirty", str(cron.state)) as held:
        assert held
        result = cron(command_of("--once dirty "))
    assert (result.returncode, result.stderr) == (0, "")
    assert "job dirty skipped" in (cron.state / "jobs.log").read_text()
    assert snapshots.get(org.id, "overview") is None


def test_the_prune_line_does_nothing_without_a_retention(cron):
    result = cron(command_of("--once prune"))
    assert (result.returncode, result.stderr) == (0, "")
    assert not (cron.state / "jobs.log").exists()


def test_the_prune_line_deletes_records_past_the_retention_and_logs(cron):
    org = make_org("Acme")
    today = utcnow().date()        # cron's rua prunes against the real clock
    old = report_on(org, "example.com", today - timedelta(days=40), [{"count": 3}])
    kept = report_on(org, "example.com", today - timedelta(days=2), [{"count": 2}])
    result = cron(command_of("--once prune"), RUA_RETENTION_DAYS="30")
    assert (result.returncode, result.stderr) == (0, "")
    assert "job prune ok" in (cron.state / "jobs.log").read_text()
    assert Record.select().where(Record.report == old.id).count() == 0
    assert Record.select().where(Record.report == kept.id).count() == 1


def test_the_fetch_line_does_nothing_without_a_mailbox(cron):
    result = cron(command_of("--once fetch"))
    assert (result.returncode, result.stderr) == (0, "")
    assert not (cron.state / "jobs.log").exists()


def test_the_fetch_line_fetches_files_and_refreshes(cron, imap_server,  # noqa: F811
                                                    monkeypatch, tmp_path):
    org = make_org("Acme")
    make_domain(org, "example.com")
    box = Box(imap_server, monkeypatch, tmp_path)
    box.append(report_mail("r-1"))
    result = cron(command_of("--once fetch"), **box.settings)
    assert (result.returncode, result.stderr) == (0, "")
    log = (cron.state / "jobs.log").read_text()
    assert log.strip().endswith("job fetch done") and "Traceback" not in log, log
    assert box.subjects(box.done) == ["Report r-1"]
    assert snapshots.get(org.id, "overview") is not None


@pytest.mark.parametrize("job", ["dns", "sources", "notify", "hour"])
def test_each_scheduler_job_line_runs_its_job_and_logs(cron, job):
    make_org("Acme")
    result = cron(command_of(f"--once {job} "))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    log = (cron.state / "jobs.log").read_text()
    assert log.strip().endswith(f"job {job} done"), log
    assert "Traceback" not in log
