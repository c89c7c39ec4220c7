"""Every background job in one table: each room's own job function, when it runs, and what
follows it. The jobs that can change what the API shows (DNS check, enrichment, fetched mail)
refresh the organizations they marked dirty right after, not at the next minute."""
from __future__ import annotations

from datetime import datetime, timezone

from dnscheck import jobs as dns_jobs
from intake import jobs as intake_jobs
from notify import drain
from snapshotter import jobs as snapshot_jobs
from sources import jobs as source_jobs
from store import job_runs, retention


def job_table(config):
    """(name, function of now, trigger arguments) for each scheduled job."""
    address = config.report_address
    return (
        ("dirty", lambda now: snapshot_jobs.refresh_dirty(now, report_address=address),
         every(minutes=1, at_start=True)),
        ("health",
         lambda now: snapshot_jobs.refresh_all(now, kinds=("health",), report_address=address),
         every(hours=1)),
        ("dns", then_refresh(dns_jobs.scheduled, config), every(hours=1, at_start=True)),
        ("sources", then_refresh(source_jobs.scheduled, config),
         every(minutes=5, at_start=True)),
        ("notify", lambda now: drain.scheduled(now, config), every(minutes=1, at_start=True)),
        # The quota events of the hours gone (snapshotter/alerts.py), then their organizations.
        ("hour", lambda now: snapshot_jobs.hour_started(now, report_address=address),
         {"trigger": "cron", "minute": 0, "second": 5, "timezone": "UTC"}),
        ("daily", lambda now: snapshot_jobs.daily(now, report_address=address),
         {"trigger": "cron", "hour": 0, "minute": 5, "timezone": "UTC"}),
    ) + prune_jobs(config) + fetch_jobs(config)


def prune_jobs(config):
    """Records past RUA_RETENTION_DAYS deleted daily at 00:20 UTC, when retention is on."""
    if not config.retention_days:
        return ()
    return (("prune", lambda now: retention.prune(now, config.retention_days),
             {"trigger": "cron", "hour": 0, "minute": 20, "timezone": "UTC"}),)


def fetch_jobs(config):
    """Mail fetched every RUA_FETCH_INTERVAL minutes (and at start) when a mailbox is set."""
    if not (config.imap_url or config.maildir):
        return ()
    job = then_refresh(intake_jobs.scheduled, config)
    return (("fetch", job, every(minutes=config.fetch_interval, at_start=True)),)


def every(*, at_start: bool = False, **interval) -> dict:
    """An interval trigger; at_start also runs it as soon as the scheduler starts."""
    trigger = {"trigger": "interval", **interval}
    if at_start:
        trigger["next_run_time"] = datetime.now(timezone.utc)
    return trigger


def then_refresh(job, config):
    """The job, then a refresh of the organizations marked dirty (none marked: one query); a
    job that was skipped (None, as offline) refreshes nothing. A job that failed (JobFailed)
    still has what it did before failing refreshed, then its failure raised."""
    def refresh(now: datetime):
        snapshot_jobs.refresh_dirty(now, report_address=config.report_address)

    def run(now: datetime):
        try:
            result = job(now, config)
        except job_runs.JobFailed:
            refresh(now)
            raise
        if result is not None:
            refresh(now)
        return result
    return run
