"""Slices of a stored series, cut on the bytes, read as the same points as the whole series."""
from datetime import date, timedelta

import orjson
import pytest

from snapshotter import series
from store.encoding import dumps

FIRST = date(2026, 3, 1)
AWKWARD = ['A},{B', '{"day":"2026-03-09"}', '},{"snapshot_date":"2026-12-31"', "{", "}", "\\"]


def points(count: int) -> list[dict]:
    """History-shaped points whose text values hold braces, quotes and the separator itself."""
    return [{"snapshot_date": FIRST + timedelta(days=i), "grade": AWKWARD[i % len(AWKWARD)],
             "score": 90.0 - i} for i in range(count)]


@pytest.mark.parametrize("count", [0, 1, 2, 5, 12, 40])
def test_the_last_points_are_the_same_points_when_values_hold_braces(count):
    whole = points(12)
    assert orjson.loads(series.last(dumps(whole), count)) == orjson.loads(
        dumps(whole[max(0, 12 - count):]))


@pytest.mark.parametrize("offset", [0, 1, 7, 11, 12])
def test_points_since_a_day_are_the_same_points_when_values_hold_braces(offset):
    whole, first = points(12), FIRST + timedelta(days=offset)
    assert orjson.loads(series.since(dumps(whole), first.isoformat())) == orjson.loads(
        dumps([p for p in whole if p["snapshot_date"] >= first]))


def test_a_slice_is_the_stored_bytes_of_its_points():
    whole = points(12)
    assert series.last(dumps(whole), 5) == dumps(whole[-5:])
    assert series.since(dumps(whole), "2026-03-04") == dumps(whole[3:])


def test_an_envelope_wraps_a_slice_as_one_document():
    body = series.envelope(3, series.last(dumps(points(12)), 3))
    assert orjson.loads(body) == {"days": 3, "points": orjson.loads(dumps(points(12)[-3:]))}
