"""The one clock: naive UTC datetimes with whole seconds, as the contract prints them."""
from datetime import date, datetime, timedelta, timezone

_EPOCH = datetime(1970, 1, 1)
_SECOND = timedelta(seconds=1)
# DMARC was published in 2012: a report window before it is a reporter's broken clock.
FIRST_REPORT_DAY = date(2012, 1, 1)
FIRST_REPORT_EPOCH = (datetime(2012, 1, 1) - _EPOCH) // _SECOND


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)


def from_epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None, microsecond=0)


def to_epoch(moment: datetime) -> int:
    # Plain arithmetic: a fifth of the time of .timestamp(), and every metered request asks.
    return (moment - _EPOCH) // _SECOND


RFC3339 = "%Y-%m-%dT%H:%M:%SZ"     # the contract's instants: UTC, whole seconds


def rfc3339(moment: datetime) -> str:
    """The instant as the contract writes it; an aware datetime is converted to UTC first."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime(RFC3339)


def stored_date(value) -> date | None:
    """A date column's value as a date: SQLite hands back text where peewee does not convert
    (aggregates, raw rows), Postgres a date; None stays None."""
    if value is None or isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


def stored_instant(value) -> datetime | None:
    """A DATETIME column's value as a datetime (SQLite: text where peewee does not convert)."""
    if isinstance(value, str):
        return datetime.fromisoformat(value)
    return value
