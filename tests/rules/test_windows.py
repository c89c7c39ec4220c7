"""A report window's UTC days, on plain epochs."""
import datetime as dt

import pytest

from rules.windows import window_days
from store.clock import to_epoch


@pytest.mark.parametrize("begin, end, day_begin, day_end, rollup_day", [
    ("2024-03-05 00:00:00", "2024-03-06 00:00:00", "2024-03-05", "2024-03-05", "2024-03-05"),
    ("2024-03-05 00:00:00", "2024-03-05 23:59:59", "2024-03-05", "2024-03-05", "2024-03-05"),
    ("2024-03-05 10:00:00", "2024-03-06 10:00:00", "2024-03-05", "2024-03-06", "2024-03-05"),
    ("2024-03-05 14:00:00", "2024-03-06 14:00:00", "2024-03-05", "2024-03-06", "2024-03-06"),
    ("2024-03-05 00:00:00", "2024-03-08 00:00:00", "2024-03-05", "2024-03-07", "2024-03-06"),
    ("2024-03-05 00:00:00", "2024-03-05 00:00:00", "2024-03-05", "2024-03-05", "2024-03-05"),
])
def test_an_end_at_midnight_belongs_to_the_day_before(begin, end, day_begin, day_end, rollup_day):
    epoch = lambda text: to_epoch(dt.datetime.fromisoformat(text))  # noqa: E731
    assert window_days(epoch(begin), epoch(end)) == tuple(
        dt.date.fromisoformat(d) for d in (day_begin, day_end, rollup_day))


def test_a_window_outside_any_calendar_is_a_value_error():
    with pytest.raises(ValueError, match="date range"):
        window_days(10**20, 10**20 + 1)
