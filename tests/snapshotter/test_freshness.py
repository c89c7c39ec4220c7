"""Stale or fresh: a change older than the tolerance and newer than the blob makes it stale."""
from datetime import datetime, timedelta

import pytest

from snapshotter.freshness import stale, young

NOON = datetime(2026, 3, 31, 12, 0, 0)
MIN = timedelta(minutes=1)


@pytest.mark.parametrize("kind, computed_at, dirty_since, now, expected", [
    ("overview", NOON, None, NOON + 60 * MIN, False),            # nothing changed
    ("overview", NOON, NOON + MIN, NOON + 5 * MIN, False),       # changed 4 min ago: allowed
    ("overview", NOON, NOON + MIN, NOON + 7 * MIN, True),        # changed 6 min ago
    ("overview", NOON, NOON - MIN, NOON + 7 * MIN, False),       # change older than the blob
    ("overview", NOON, NOON, NOON + 7 * MIN, True),              # same second: recompute
    ("health", NOON, NOON + MIN, NOON + 30 * MIN, False),        # health may be an hour old
    ("health", NOON, NOON + MIN, NOON + 62 * MIN, True),
    ("trends", NOON, None, datetime(2026, 4, 1, 0, 4), False),   # new day, 4 min ago
    ("trends", NOON, None, datetime(2026, 4, 1, 0, 6), True),    # new day, 6 min ago
    ("trends", datetime(2026, 4, 1, 0, 5), None, datetime(2026, 4, 1, 9), False),
])
def test_stale_when_a_change_after_the_blob_is_older_than_the_tolerance(kind, computed_at, dirty_since, now, expected):
    assert stale(kind, computed_at, dirty_since, now) is expected


def test_a_blob_younger_than_the_tolerance_is_fresh_without_asking():
    assert young("overview", NOON, NOON + 5 * MIN) and not young("overview", NOON, NOON + 6 * MIN)
    assert young("health", NOON, NOON + 60 * MIN)
