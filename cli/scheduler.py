"""`rua scheduler`: the background jobs of jobs/table.py, run until stopped or one at a time."""
from __future__ import annotations

import click

from cli.common import fail
from cli.session import open_store


class SchedulerCommand(click.Command):
    """Its help lists the jobs from jobs/table.py, read only when the help is shown, so that
    `rua --help` does not load the packages the jobs run."""

    def format_help_text(self, ctx, formatter):
        super().format_help_text(ctx, formatter)
        from jobs.table import JOBS
        with formatter.section("Jobs"):
            formatter.write_dl([(job.name, f"{job.what} ({job.when})") for job in JOBS])


@click.command("scheduler", cls=SchedulerCommand,
               short_help="Run the background jobs until stopped (--once JOB: one now).")
@click.option("--once", "once", metavar="JOB",
              help="Run this one job (listed above) now under its lock and exit (for cron).")
@click.pass_obj
def scheduler(config, once):
    """Run the background jobs until stopped, each on its schedule under its own lock;
    --once JOB runs one of them now."""
    from jobs.scheduler import run, run_exclusive
    from jobs.table import JOBS, job_table
    import logs
    logs.configure(config)
    if once is None:
        with open_store(config):
            pass                        # the store answers and rua knows its schema
        run(config)
        return
    jobs = {name: job for name, job, _ in job_table(config)}
    if once not in jobs:
        fail(f"no job {once!r} ({'; '.join(jobs_offered(JOBS, config))})")
    from store.job_runs import JobFailed
    with open_store(config):
        try:
            ran = run_exclusive(once, jobs[once], config)
        except JobFailed as exc:
            fail(f"job {once} failed: {exc}")
    click.echo(f"job {once} {'done' if ran else 'skipped: another runner holds its lock'}")


def jobs_offered(table, config) -> list[str]:
    """The jobs this config runs, then each one it leaves off with the settings it needs."""
    offered = [f"jobs: {', '.join(job.name for job in table if job.enabled(config))}"]
    for job in table:
        if not job.enabled(config):
            settings = " or ".join(f"RUA_{field.upper()}" for field in job.needs)
            offered.append(f"{job.name} needs {settings}")
    return offered
