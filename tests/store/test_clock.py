"""The one clock: naive UTC datetimes with whole seconds, and epoch seconds."""
from __future__ import annotations

from datetime import datetime

import pytest

from store.clock import from_epoch, to_epoch, utcnow


@pytest.mark.parametrize("moment, epoch", [
    (datetime(1970, 1, 1), 0),
    (datetime(1969, 12, 31, 23, 59, 59), -1),
    (datetime(2024, 2, 29, 23, 59, 59), 1_709_251_199),
    (datetime(2026, 11, 24, 14, 0, 0, 999_999), 1_795_528_800),   # a fraction is dropped
])
def test_a_utc_moment_is_its_epoch_second(moment, epoch):
    assert to_epoch(moment) == epoch


def test_from_epoch_and_to_epoch_are_inverse_on_whole_seconds():
    now = utcnow()
    assert now.microsecond == 0 and now.tzinfo is None
    assert from_epoch(to_epoch(now)) == now


def test_an_instant_is_written_in_utc_with_whole_seconds():
    from datetime import datetime, timedelta, timezone

    from store.clock import rfc3339
    assert rfc3339(datetime(2026, 1, 2, 3, 4, 5, 999999)) == "2026-01-02T03:04:05Z"
    paris = timezone(timedelta(hours=1))
    assert rfc3339(datetime(2026, 1, 2, 4, 4, 5, tzinfo=paris)) == "2026-01-02T03:04:05Z"


def test_a_stored_date_or_instant_reads_the_same_from_text_or_a_driver_value():
    from datetime import date, datetime

    from store.clock import stored_date, stored_instant
    assert stored_date("2026-03-01") == stored_date(date(2026, 3, 1)) == date(2026, 3, 1)
    assert stored_date(None) is None
    moment = datetime(2026, 3, 1, 14, 0, 5)
    assert stored_instant("2026-03-01 14:00:05") == stored_instant(moment) == moment
