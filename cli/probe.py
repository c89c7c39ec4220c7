"""`rua wait` and `rua health`: the start order and health checks of a container deployment.

`rua wait` holds a service back until `rua init` has made the schema, so the start order holds
where a compose tool ignores depends_on conditions; `rua health` is the scheduler's and the
fetcher's health check: the store answers and a job's last run is recent and went well.
"""
from __future__ import annotations

import time
from datetime import timedelta

import click

from cli.common import UsageFailure, echo_err, fail
from cli.session import open_store


@click.command("wait")
@click.option("--timeout", type=click.IntRange(0, 3600), default=60, show_default=True,
              help="Seconds to wait before giving up.")
@click.option("--server", is_flag=True,
              help="Only until the database server answers, schema or not (before `rua init`).")
@click.pass_obj
def wait(config, timeout, server):
    """Wait until the store answers with the current schema (`rua init` has run)."""
    if server and config.is_sqlite:
        click.echo("no server to wait for: the store is a SQLite file")
        return
    deadline = time.monotonic() + timeout
    said = ""
    while True:
        try:
            with open_store(config, need_schema=not server) as database:
                from store.migrations import current_version
                click.echo(f"store ready at schema version {current_version(database)}")
                return
        except UsageFailure as exc:
            if time.monotonic() >= deadline:
                fail(f"gave up after {timeout} s: {exc.message}")
            if exc.message != said:   # one line per new reason, not one a second
                echo_err(f"rua wait: {exc.message}; retrying for up to {timeout} s")
                said = exc.message
        time.sleep(1)


@click.command("health")
@click.option("--job", "job", metavar="NAME",
              help="Also require this scheduled job's last run to have gone well.")
@click.option("--within", type=click.IntRange(1), default=None, metavar="MINUTES",
              help="With --job: its last run started no longer ago than this.")
@click.pass_obj
def health(config, job, within):
    """Exit 0 when the store answers with the current schema (and --job ran well, lately)."""
    from store import job_runs
    from store.clock import utcnow
    with open_store(config):
        runs = {run.name: run for run in job_runs.last_runs()}
    if job is None:
        click.echo("store ready")
        return
    run = runs.get(job)
    if run is None:
        fail(f"job {job} has not run yet")
    if run.ok is False:
        fail(f"job {job}'s last run failed ({run.failures} of {run.runs} runs failed)")
    if within is not None and utcnow() - run.started_at > timedelta(minutes=within):
        fail(f"job {job} last started at {run.started_at:%Y-%m-%d %H:%M:%S} UTC, "
             f"over {within} minutes ago")
    click.echo(f"job {job} last started at {run.started_at:%Y-%m-%d %H:%M:%S} UTC: "
               f"{'running' if run.ok is None else 'ok'}")
