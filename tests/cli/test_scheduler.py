"""`rua scheduler`: its help and `--once JOB` come from the job table."""
from jobs.table import JOBS
from store import snapshots
from tests.factories import make_org
from tests.snapshotter.reports import TODAY, report_on


def test_the_help_lists_every_job_of_the_table_with_its_schedule(rua):
    result = rua("scheduler", "--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for job in JOBS:
        assert f"{job.name} {job.what} ({job.when})" in text


def test_scheduler_once_runs_one_job_under_its_lock_for_cron(rua, config):
    from store import locks
    dirty = make_org()
    report_on(dirty, "example.com", TODAY, [{"count": 3}])
    with locks.exclusive("job.dirty", config.lock_dir) as held:
        assert held
        busy = rua("scheduler", "--once", "dirty")
    assert busy.exit_code == 0 and "skipped" in busy.stdout
    assert snapshots.get(dirty.id, "overview") is None
    result = rua("scheduler", "--once", "dirty")
    assert result.exit_code == 0 and "job dirty done" in result.stdout, result.output
    assert snapshots.get(dirty.id, "overview") is not None


def test_scheduler_once_names_the_jobs_when_given_an_unknown_one(rua):
    result = rua("scheduler", "--once", "nightly")
    assert result.exit_code == 2
    always = ", ".join(job.name for job in JOBS if not job.needs)
    assert f"no job 'nightly' (jobs: {always}; " in result.output
    assert "prune needs RUA_RETENTION_DAYS" in result.output
    assert "fetch needs RUA_IMAP_URL or RUA_MAILDIR" in result.output
