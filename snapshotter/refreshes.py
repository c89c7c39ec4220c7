"""The refreshes of many organizations that the scheduler and `rua snapshot` run: the dirty
ones, every domain's health, the daily and the hourly refresh.

Each organization is refreshed under its own lock (an advisory lock on Postgres, a lock file
on SQLite), whichever job, scheduler, host or request (snapshotter/jobs.refresh_one) started
it: a refresh that read older facts never writes over a newer one's blobs. One that finds the
lock taken leaves the organization marked dirty for the next run. Many organizations are refreshed in parallel processes, each
with its own connection: a refresh is mostly Python's work, one CPU each.
"""
from __future__ import annotations

import functools
import logging
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime, timedelta

import logs
from snapshotter import event_refresh
from snapshotter.jobs import SERVED_KINDS, Refreshed, org_lock, record_day, refresh_org
from store import db, events, open_db
from store.models import Organization

log = logging.getLogger("rua.snapshotter")
# Starting a process (its imports) costs about what five refreshes do: below this many
# organizations for each, fewer processes finish sooner.
ORGS_PER_PROCESS = 20


def refresh_dirty(now: datetime, config, *, processes: int | None = None) -> list[Refreshed]:
    """Refresh every organization marked dirty (by ingest, the DNS check, enrichment, an
    event), the oldest mark first. One another refresh holds keeps its mark until a refresh
    settles it, so it is not marked again."""
    return refresh_many(events.dirty_orgs(), now, config, processes=processes, mark_held=False)


def refresh_all(now: datetime, config, *, kinds=SERVED_KINDS,
                processes: int | None = None) -> list[Refreshed]:
    ids = [i for (i,) in Organization.select(Organization.id).order_by(Organization.id).tuples()]
    return refresh_many(ids, now, config, kinds=kinds, processes=processes)


def refresh_health(now: datetime, config) -> list[Refreshed]:
    """Every domain's health (the hourly job): its DNS findings and time-driven conditions."""
    return refresh_all(now, config, kinds=("health",))


def daily(now: datetime, config) -> list[Refreshed]:
    """After midnight: yesterday's final history row, then every blob (the windows moved)."""
    yesterday = now.date() - timedelta(days=1)
    for (org_id,) in Organization.select(Organization.id).tuples():
        record_day(org_id, yesterday, now, config.report_address)
    return refresh_all(now, config)


def hour_started(now: datetime, config) -> list[Refreshed]:
    """At each hour's start: close the quota_near_cap events of hours gone, refresh their orgs."""
    event_refresh.quota_hours(now)
    return refresh_dirty(now, config)


def refresh_many(ids: list[str], now: datetime, config, *, kinds=SERVED_KINDS,
                 processes: int | None = None, mark_held: bool = True) -> list[Refreshed]:
    """Refresh the organizations, each under its lock; those refreshed. processes: how many
    to spread them over (default: one per CPU, once there are enough organizations);
    mark_held: an organization another refresh holds is marked dirty for the next run."""
    if processes is None:
        processes = min(os.cpu_count() or 1, len(ids) // ORGS_PER_PROCESS)
    work = functools.partial(refresh_locked, now=now, config=config, kinds=kinds,
                             mark_held=mark_held)
    return [r for r in each(work, ids, config, processes) if r is not None]


def refresh_locked(org_id: str, now: datetime, config, kinds=SERVED_KINDS, *,
                   mark_held: bool = True) -> Refreshed | None:
    """refresh_org under the organization's lock; None when another refresh holds it (the
    organization is then marked dirty for the next run, with mark_held)."""
    with org_lock(org_id, config.lock_dir) as held:
        if not held:
            if mark_held:
                events.mark_dirty(org_id, now)
            log.info("refresh of %s left to the next run: another refresh holds it", org_id)
            return None
        started = time.perf_counter()
        result = refresh_org(org_id, now, kinds=kinds, report_address=config.report_address)
    log.info("refreshed %s: %d blobs, %d bytes in %.3f s", org_id, result.blobs, result.bytes,
             time.perf_counter() - started)
    return result


def each(work, ids: list[str], config, processes: int) -> list:
    """work(org_id) for every id, here (the store open) or in `processes` spawned processes
    that open config's store; every id is worked on, then the first failure is raised."""
    if processes <= 1:
        return _outcomes((org_id, functools.partial(work, org_id)) for org_id in ids)
    spawn = multiprocessing.get_context("spawn")    # never a forked copy of our connection
    logged = any(getattr(h, "rua", False) for h in logging.getLogger().handlers)
    with ProcessPoolExecutor(processes, mp_context=spawn, initializer=_start_worker,
                             initargs=(config, logged)) as pool:
        futures = [(org_id, pool.submit(_connected, work, org_id)) for org_id in ids]
        return _outcomes((org_id, future.result) for org_id, future in futures)


def _outcomes(calls) -> list:
    results, failure = [], None
    for org_id, call in calls:
        try:
            results.append(call())
        except BrokenProcessPool:         # a process was killed: the rest wait for the next run
            raise
        except Exception as exc:          # the other organizations are refreshed all the same
            log.exception("refresh of %s failed", org_id)
            failure = failure or exc
    if failure is not None:
        raise failure
    return results


def _start_worker(config, logged: bool) -> None:
    """Open the store; log as the parent does (the scheduler logs, a command does not)."""
    if logged:
        logs.configure(config)
    open_db(config.database_url)


def _connected(work, org_id: str):
    with db.connection_context():
        return work(org_id)
