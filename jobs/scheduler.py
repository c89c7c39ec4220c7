"""The snapshot scheduler: its own process (never inside gunicorn workers), safe to run twice.

Jobs: dirty organizations every minute (and at start), every domain's health hourly, every
monitored domain's live DNS check hourly (and at start; a domain added since is in the next
run), sending sources' enrichment every 5 minutes (new ones first, then the day-old), due
alerts sent to their channels every minute (and at start), at each hour's start the
quota_near_cap events of the hour gone closed (snapshotter/alerts.py says where the other
conditions are judged), the day's history row and a full refresh at 00:05 UTC. Each run takes
a lock named after its job, so two schedulers (two hosts on one Postgres) never run the same job
at once: the second one skips.
"""
from __future__ import annotations

import logging
import signal
from datetime import datetime, timezone

from apscheduler.schedulers.blocking import BlockingScheduler

from snapshotter import jobs
from store import locks
from store import db, open_db
from store.clock import utcnow

log = logging.getLogger("rua.scheduler")


def run_exclusive(name: str, job, config, clock=utcnow) -> bool:
    """Run job(now) under the job's lock; False (not run) when another runner holds it."""
    with db.connection_context():
        with locks.exclusive(f"job.{name}", config.lock_dir) as held:
            if not held:
                log.info("job %s skipped: another scheduler is running it", name)
                return False
            job(clock())
            return True


def job_table(config):
    """(name, function of now, trigger arguments) for each scheduled job."""
    address = config.report_address
    return (
        ("dirty", lambda now: jobs.refresh_dirty(now, report_address=address),
         {"trigger": "interval", "minutes": 1, "next_run_time": datetime.now(timezone.utc)}),
        ("health", lambda now: jobs.refresh_all(now, kinds=("health",), report_address=address),
         {"trigger": "interval", "hours": 1}),
        ("dns", lambda now: jobs.check_dns(now, config),
         {"trigger": "interval", "hours": 1, "next_run_time": datetime.now(timezone.utc)}),
        ("sources", lambda now: jobs.enrich_sources(now, config),
         {"trigger": "interval", "minutes": 5, "next_run_time": datetime.now(timezone.utc)}),
        ("notify", lambda now: jobs.send_notifications(now, config),
         {"trigger": "interval", "minutes": 1, "next_run_time": datetime.now(timezone.utc)}),
        ("hour", lambda now: jobs.hour_started(now, report_address=address),
         {"trigger": "cron", "minute": 0, "second": 5, "timezone": "UTC"}),
        ("daily", lambda now: jobs.daily(now, report_address=address),
         {"trigger": "cron", "hour": 0, "minute": 5, "timezone": "UTC"}),
    ) + fetch_jobs(config)


def fetch_jobs(config):
    """Mail fetched every RUA_FETCH_INTERVAL minutes (and at start) when a mailbox is set."""
    if not (config.imap_url or config.maildir):
        return ()
    return (("fetch", lambda now: jobs.fetch_mail(now, config),
             {"trigger": "interval", "minutes": config.fetch_interval,
              "next_run_time": datetime.now(timezone.utc)}),)


def build(config, clock=utcnow) -> BlockingScheduler:
    scheduler = BlockingScheduler(timezone="UTC")
    for name, job, trigger in job_table(config):
        # coalesce: runs missed while busy collapse into one; max_instances: never overlap itself.
        scheduler.add_job(run_exclusive, args=(name, job, config, clock), id=name, name=name,
                          coalesce=True, max_instances=1, misfire_grace_time=300, **trigger)
    return scheduler


def run(config):
    """Open the store and block running the jobs until interrupted."""
    open_db(config.database_url)
    scheduler = build(config)
    # systemd stops the unit with SIGTERM: finish the running job's transaction, then leave.
    signal.signal(signal.SIGTERM, lambda *_: scheduler.shutdown(wait=False))
    log.info("scheduler started: %s", ", ".join(job.id for job in scheduler.get_jobs()))
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        pass
