"""The last run of each scheduled job: written by the scheduler, read by /readyz and metrics.

A job whose work failed raises JobFailed (or any error): its run is recorded as failed, so
`/readyz` says `"ok": false` and `rua_job_last_success` is 0."""
from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from peewee import EXCLUDED

from store import db
from store.models import JobRun


class JobFailed(Exception):
    """The job ran but its work failed (a mailbox refused, the resolver silent); the message
    says why in one line. What it did before failing stays done."""


class LastRun(NamedTuple):
    name: str
    started_at: datetime
    finished_at: datetime | None
    ok: bool | None
    runs: int
    failures: int


def started(name: str, now: datetime) -> None:
    """A run of the job began (its previous outcome stays until this one ends)."""
    with db.atomic():
        (JobRun.insert(name=name, started_at=now, runs=1, failures=0)
         .on_conflict(conflict_target=[JobRun.name],
                      update={JobRun.started_at: EXCLUDED.started_at,
                              JobRun.runs: JobRun.runs + 1})
         .execute())


def finished(name: str, now: datetime, ok: bool) -> None:
    """The run ended, well or with an error."""
    with db.atomic():
        (JobRun.update(finished_at=now, ok=ok,
                       failures=JobRun.failures + (0 if ok else 1))
         .where(JobRun.name == name).execute())


def last_runs() -> list[LastRun]:
    """Every job that ever ran, by name."""
    query = (JobRun.select(JobRun.name, JobRun.started_at, JobRun.finished_at, JobRun.ok,
                           JobRun.runs, JobRun.failures)
             .order_by(JobRun.name).tuples())
    return [LastRun(*row) for row in query]
