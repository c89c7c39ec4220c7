"""The scheduler: its own process (never inside gunicorn workers), safe to run twice.

It runs the jobs of jobs/table.py on their triggers. Each run takes a lock named after its job,
so two schedulers (two hosts on one Postgres) never run the same job at once: the second one
skips. A run whose job raised (JobFailed: its work failed) is recorded and logged as failed.
A run the store failed (down, restarting) waits for the store and runs again as soon as it
answers, rather than at the job's next trigger.
"""
from __future__ import annotations

import logging
import signal
import threading
import time

from apscheduler.schedulers.blocking import BlockingScheduler

from jobs.table import job_table
from store import db, job_runs, locks, open_db
from store.clock import utcnow
from store.failures import is_store_failure

log = logging.getLogger("rua.scheduler")
# A run the store failed asks it this often whether it answers again.
STORE_RETRY_SECONDS = 0.5
# Set when the scheduler is stopping: a run waiting for the store gives up.
stopping = threading.Event()
# One waiting run asks the store at a time; the others, behind it, then find it answering.
_asking = threading.Lock()


def run_exclusive(name: str, job, config, clock=utcnow) -> bool:
    """Run job(now) under the job's lock; False (not run) when another runner holds it. Each
    run is recorded (store/job_runs.py) and logged in one line with its outcome and time; a
    job's error, JobFailed included, is recorded as a failed run and raised."""
    with db.connection_context():
        with locks.exclusive(f"job.{name}", config.lock_dir) as held:
            if not held:
                log.info("job %s skipped: another scheduler is running it", name)
                return False
            began = time.perf_counter()
            job_runs.started(name, clock())
            try:
                job(clock())
            except job_runs.JobFailed as exc:
                _ended(name, clock(), began, ok=False, reason=str(exc))
                raise
            except BaseException:
                _ended(name, clock(), began, ok=False)
                raise
            _ended(name, clock(), began, ok=True)
            return True


def _ended(name: str, now, began: float, ok: bool, reason: str = "") -> None:
    job_runs.finished(name, now, ok)
    seconds = round(time.perf_counter() - began, 3)
    fields = {"job": name, "outcome": "ok" if ok else "failed", "seconds": seconds}
    if ok:
        log.info("job %s ok in %ss", name, seconds, extra=fields)
    elif reason:
        log.error("job %s failed in %ss: %s", name, seconds, reason,
                  extra={**fields, "reason": reason})
    else:
        log.error("job %s failed in %ss", name, seconds, extra=fields)


def run_scheduled(name: str, job, config, clock=utcnow) -> None:
    """One run as the scheduler starts it: a JobFailed is recorded and logged in one line by
    run_exclusive, so it is not handed on to APScheduler, which would log a traceback. A run
    the store failed waits until it answers and runs once more (a second failure is raised)."""
    for last in (False, True):
        try:
            run_exclusive(name, job, config, clock)
            return
        except job_runs.JobFailed:
            return
        except Exception as exc:
            if last or not is_store_failure(exc):
                raise
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            log.warning("job %s: the store failed (%s); run again once it answers", name,
                        reason, extra={"job": name, "outcome": "waiting", "reason": reason})
        waited = wait_for_store()
        if waited is None:
            return
        log.info("job %s: the store answers again after %.1f s; running it now", name, waited,
                 extra={"job": name, "outcome": "resumed", "waited": round(waited, 3)})


def wait_for_store(pause: float = STORE_RETRY_SECONDS) -> float | None:
    """The seconds waited until a new connection answers; None when the scheduler is stopping
    first. The pool's idle connections are dropped before each try: they are the dead
    server's."""
    began = time.monotonic()
    with _asking:
        while not stopping.is_set():
            if hasattr(db.obj, "close_idle"):
                db.obj.close_idle()
            try:
                with db.connection_context():
                    db.execute_sql("SELECT 1")
                return time.monotonic() - began
            except Exception as exc:
                if not is_store_failure(exc):
                    raise
            stopping.wait(pause)
    return None


def build(config, clock=utcnow) -> BlockingScheduler:
    scheduler = BlockingScheduler(timezone="UTC")
    for name, job, trigger in job_table(config):
        # coalesce: runs missed while busy collapse into one; max_instances: never overlap itself.
        scheduler.add_job(run_scheduled, args=(name, job, config, clock), id=name, name=name,
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
    finally:
        stopping.set()              # a run waiting for the store gives up
