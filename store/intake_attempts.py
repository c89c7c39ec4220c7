"""Readings of fetched messages: recorded as they start, forgotten once they finish."""
from __future__ import annotations

from datetime import datetime

from store.models import IntakeAttempt


def unfinished(message: str) -> int:
    """How many readings of the message started and never finished (0 for a new one)."""
    row = IntakeAttempt.get_or_none(IntakeAttempt.message == message)
    return row.attempts if row is not None else 0


def begin(message: str, now: datetime) -> None:
    """Record one more reading started (committed at once, outside any transaction)."""
    (IntakeAttempt.insert(message=message, attempts=1, started_at=now)
     .on_conflict(conflict_target=[IntakeAttempt.message],
                  update={IntakeAttempt.attempts: IntakeAttempt.attempts + 1,
                          IntakeAttempt.started_at: now})
     .execute())


def finish(message: str) -> None:
    """The reading finished, whatever its outcome: nothing is left to count."""
    IntakeAttempt.delete().where(IntakeAttempt.message == message).execute()
