"""`rua snapshot` (recompute snapshots now, for cron) and `rua scheduler` (the snapshot jobs)."""
from __future__ import annotations

import time

import click

from cli.common import fail
from cli.session import open_store
from store.clock import utcnow


def find_org(text: str):
    from peewee import DoesNotExist
    from store.models import Organization
    try:
        return Organization.get((Organization.id == text.upper()) | (Organization.name == text))
    except DoesNotExist:
        fail(f"no organization {text!r} (give its id or name)")


def refresh_touched(config, err: bool = False):
    """After ingest: refresh the organizations it marked dirty (the store is already open)."""
    from snapshotter import jobs
    started = time.perf_counter()
    results = jobs.refresh_dirty(utcnow(), report_address=config.report_address)
    click.echo(f"snapshots: refreshed {len(results)} organization(s) in "
               f"{time.perf_counter() - started:.2f} s", err=err)


@click.command("snapshot")
@click.option("--org", "org", metavar="ORG", help="Only this organization (id or name).")
@click.option("--all", "every", is_flag=True, help="Every organization, dirty or not.")
@click.option("--daily", is_flag=True,
              help="The after-midnight job: yesterday's final score-history row of every "
                   "organization, then every snapshot (for cron at 00:05 UTC).")
@click.pass_obj
def snapshot(config, org, every, daily):
    """Recompute snapshots now: dirty organizations, or --org ORG, or --all, or --daily."""
    from snapshotter import jobs
    if sum(map(bool, (org, every, daily))) > 1:
        fail("give one of --org ORG, --all or --daily")
    with open_store(config):
        now, started = utcnow(), time.perf_counter()
        address = config.report_address
        if org:
            results = [jobs.refresh_org(find_org(org).id, now, report_address=address)]
        elif every:
            results = jobs.refresh_all(now, report_address=address)
        elif daily:
            results = jobs.daily(now, report_address=address)
        else:
            results = jobs.refresh_dirty(now, report_address=address)
        for r in results:
            click.echo(f"{r.org_id}: {r.blobs} snapshots, {r.bytes} bytes")
        click.echo(f"refreshed {len(results)} organization(s) in "
                   f"{time.perf_counter() - started:.2f} s")


@click.command("scheduler")
@click.option("--once", "once", metavar="JOB",
              help="Run this one job now under its lock and exit (for cron): dirty, health, "
                   "dns, sources, notify, hour, daily, prune, fetch.")
@click.pass_obj
def scheduler(config, once):
    """Run the background jobs until stopped: snapshots of organizations with new reports
    every minute and every snapshot hourly, the DNS check hourly, source enrichment every 5
    minutes, alert delivery every minute, the hour's quota events, the daily history at
    00:05 UTC, records past RUA_RETENTION_DAYS deleted at 00:20 UTC, and mail fetching when
    a mailbox is set. --once JOB runs one of them."""
    from jobs.scheduler import run, run_exclusive
    from jobs.table import job_table
    import logs
    logs.configure(config)
    if once is None:
        with open_store(config):
            pass                        # the store answers and rua knows its schema
        run(config)
        return
    jobs = {name: job for name, job, _ in job_table(config)}
    if once not in jobs:
        fail(f"no job {once!r} (jobs: {', '.join(jobs)}; fetch needs RUA_IMAP_URL or "
             "RUA_MAILDIR, prune RUA_RETENTION_DAYS)")
    from store.job_runs import JobFailed
    with open_store(config):
        try:
            ran = run_exclusive(once, jobs[once], config)
        except JobFailed as exc:
            fail(f"job {once} failed: {exc}")
    click.echo(f"job {once} {'done' if ran else 'skipped: another runner holds its lock'}")
