"""Failed readings of fetched messages: a reading is counted as it starts, forgotten once the
message is filed, and kept when it fails (intake/poison.py)."""
from __future__ import annotations

from datetime import datetime

from store.models import IntakeAttempt


def failed(message: str) -> int:
    """How many readings of the message failed: started and never finished, or kept after an
    error rua cannot classify (0 for a new one)."""
    row = IntakeAttempt.get_or_none(IntakeAttempt.message == message)
    return row.attempts if row is not None else 0


def begin(message: str, now: datetime) -> None:
    """Count one more reading, failed until it ends otherwise (committed at once, outside any
    transaction, so that a process killed while reading leaves it counted)."""
    (IntakeAttempt.insert(message=message, attempts=1, started_at=now)
     .on_conflict(conflict_target=[IntakeAttempt.message],
                  update={IntakeAttempt.attempts: IntakeAttempt.attempts + 1,
                          IntakeAttempt.started_at: now})
     .execute())


def take_back(message: str) -> None:
    """The reading begun last failed for the store's sake, not the message's: it does not count."""
    IntakeAttempt.update(attempts=IntakeAttempt.attempts - 1).where(
        IntakeAttempt.message == message).execute()
    IntakeAttempt.delete().where(IntakeAttempt.message == message,
                                 IntakeAttempt.attempts <= 0).execute()


def finish(message: str) -> None:
    """The message is filed (or gone): nothing is left to count."""
    IntakeAttempt.delete().where(IntakeAttempt.message == message).execute()
