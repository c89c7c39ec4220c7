"""The one clock: naive UTC datetimes with whole seconds, as the contract prints them."""
from datetime import datetime, timezone


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)


def from_epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None, microsecond=0)


def to_epoch(moment: datetime) -> int:
    return int(moment.replace(tzinfo=timezone.utc).timestamp())
