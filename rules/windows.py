"""A report's window in UTC days: the days it covers and the one day its rollups count on."""
from __future__ import annotations

from datetime import date, timedelta

from store.clock import from_epoch


def window_days(begin: int, end: int) -> tuple[date, date, date]:
    """(day_begin, day_end, rollup day): an end at 00:00:00 belongs to the day before; the
    rollup day is the window's middle. ValueError when the epochs are no usable time."""
    try:
        first, last = from_epoch(begin), from_epoch(end)
        middle = from_epoch((begin + end) // 2)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"date range {begin}..{end} is not a usable time") from None
    day_end = last.date()
    if last.time() == last.min.time():
        day_end -= timedelta(days=1)
    return first.date(), max(day_end, first.date()), middle.date()
