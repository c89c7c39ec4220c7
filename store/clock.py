"""The one clock: naive UTC datetimes with whole seconds, as the contract prints them."""
from datetime import datetime, timedelta, timezone

_EPOCH = datetime(1970, 1, 1)
_SECOND = timedelta(seconds=1)


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)


def from_epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None, microsecond=0)


def to_epoch(moment: datetime) -> int:
    # Plain arithmetic: a fifth of the time of .timestamp(), and every metered request asks.
    return (moment - _EPOCH) // _SECOND


def stored_instant(value):
    """A DATETIME column of a raw row: SQLite hands it back as text, Postgres as a datetime
    (None stays None)."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value
