"""Every background job in one table: its name, when it runs, what it does and its function.
The table drives `rua scheduler` (its help, `--once JOB`, the triggers), and the tests check
deploy/crontab.example and the docs against it. The jobs that can change what the API shows
(DNS check, enrichment, fetched mail) refresh the organizations they marked dirty right after,
not at the next minute."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from dnscheck import jobs as dns_jobs
from intake import jobs as intake_jobs
from notify import drain
from snapshotter import refreshes
from sources import jobs as source_jobs
from store import job_runs, retention


@dataclass(frozen=True)
class Job:
    """One background job. `run(now, config)` does its work; `trigger(config)` gives
    APScheduler's trigger arguments; `cron` is the same schedule as crontab's five fields;
    `needs` names the Config fields of which one must be set for the job to run at all."""
    name: str
    when: str
    what: str
    cron: str
    trigger: Callable[[object], dict]
    run: Callable[[datetime, object], object]
    needs: tuple[str, ...] = ()

    def enabled(self, config) -> bool:
        return not self.needs or any(getattr(config, field) for field in self.needs)


def every(*, at_start: bool = False, **interval) -> Callable[[object], dict]:
    """An interval trigger; at_start also runs it as soon as the scheduler starts."""
    def trigger(config) -> dict:
        arguments = {"trigger": "interval", **interval}
        if at_start:
            arguments["next_run_time"] = datetime.now(timezone.utc)
        return arguments
    return trigger


def at(**fields) -> Callable[[object], dict]:
    """A cron trigger in UTC (minute=0, second=5: each hour's start; hour=0, minute=5: daily)."""
    return lambda config: {"trigger": "cron", "timezone": "UTC", **fields}


def every_fetch_interval(config) -> dict:
    """Every RUA_FETCH_INTERVAL minutes, and at start."""
    return every(minutes=config.fetch_interval, at_start=True)(config)


def prune(now: datetime, config):
    return retention.prune(now, config.retention_days)


def then_refresh(job):
    """The job, then a refresh of the organizations marked dirty (none marked: one query); a
    job that was skipped (None, as offline) refreshes nothing. A job that failed (JobFailed)
    still has what it did before failing refreshed, then its failure raised."""
    def run(now: datetime, config):
        try:
            result = job(now, config)
        except job_runs.JobFailed:
            refreshes.refresh_dirty(now, config)
            raise
        if result is not None:
            refreshes.refresh_dirty(now, config)
        return result
    return run


JOBS = (
    Job("dirty", "every minute, and at start",
        "snapshots of the organizations that received reports", "* * * * *",
        every(minutes=1, at_start=True), refreshes.refresh_dirty),
    Job("health", "hourly", "every domain's health snapshot", "7 * * * *",
        every(hours=1), refreshes.refresh_health),
    Job("dns", "hourly, and at start", "the live DNS check of every monitored domain",
        "17 * * * *", every(hours=1, at_start=True), then_refresh(dns_jobs.scheduled)),
    Job("sources", "every 5 minutes, and at start",
        "sending sources enriched, new ones first, then the day-old", "*/5 * * * *",
        every(minutes=5, at_start=True), then_refresh(source_jobs.scheduled)),
    Job("notify", "every minute, and at start", "due alerts sent to their channels",
        "* * * * *", every(minutes=1, at_start=True), drain.scheduled),
    Job("hour", "at each hour's start", "the quota events of the hour gone, then their "
        "organizations' snapshots", "0 * * * *", at(minute=0, second=5),
        refreshes.hour_started),
    Job("daily", "00:05 UTC", "yesterday's final score-history row, then every snapshot",
        "5 0 * * *", at(hour=0, minute=5), refreshes.daily),
    Job("prune", "00:20 UTC, with RUA_RETENTION_DAYS set",
        "records older than RUA_RETENTION_DAYS deleted", "20 0 * * *",
        at(hour=0, minute=20), prune, needs=("retention_days",)),
    Job("fetch", "every RUA_FETCH_INTERVAL minutes, and at start, with a mailbox set",
        "report mail fetched from RUA_IMAP_URL or RUA_MAILDIR", "*/5 * * * *",
        every_fetch_interval, then_refresh(intake_jobs.scheduled),
        needs=("imap_url", "maildir")),
)


def job_table(config):
    """(name, function of now, trigger arguments) for each job this config turns on."""
    return tuple((job.name, bound(job.run, config), job.trigger(config))
                 for job in JOBS if job.enabled(config))


def bound(run, config) -> Callable[[datetime], object]:
    return lambda now: run(now, config)
