"""Trend series and the byte slices the API serves from one stored 365-day series."""
from datetime import date, timedelta

import orjson
import pytest

from rules.snapshot_facts import SpanTally
from snapshotter import series
from snapshotter.history import history_point
from snapshotter.trends import last_day, merge_days, sparkline, trend_points, trend_series
from store.encoding import dumps

END = date(2026, 3, 31)


def test_trend_points_are_one_per_day_oldest_first_with_zero_filled_days():
    points = trend_points({END - timedelta(days=1): SpanTally(messages=10, compliant=7, reports=2)}, END, 3)
    assert [p["date"] for p in points] == [date(2026, 3, 29), date(2026, 3, 30), END]
    assert points[1] == {"date": date(2026, 3, 30), "total_messages": 10, "compliant_messages": 7,
                         "failed_messages": 3, "reports": 2, "compliance_rate": 70.0}
    assert points[0]["total_messages"] == 0 and points[0]["compliance_rate"] == 0.0


def test_days_before_the_series_are_left_out():
    points = trend_points({END - timedelta(days=5): SpanTally(messages=10, compliant=10)}, END, 5)
    assert sum(p["total_messages"] for p in points) == 0


def test_merged_days_add_domains_together():
    merged = merge_days([{END: SpanTally(messages=1, compliant=1)}, {END: SpanTally(messages=2, compliant=0)}, {END - timedelta(days=1): SpanTally(messages=5)}])
    assert merged[END] == SpanTally(messages=3, compliant=1) and merged[END - timedelta(days=1)] == SpanTally(messages=5)


def test_sparkline_points_carry_date_rate_and_messages():
    assert sparkline({END: SpanTally(messages=4, compliant=1)}, END, 2) == [
        {"date": END - timedelta(days=1), "compliance_rate": 0.0, "total_messages": 0},
        {"date": END, "compliance_rate": 25.0, "total_messages": 4}]


@pytest.mark.parametrize("reported", [[], [0], [1, 7, 364, 365, 380], list(range(0, 400, 2))])
def test_the_stored_series_is_the_points_as_orjson_writes_them(reported):
    days = {END - timedelta(days=i): SpanTally(messages=i + 3, compliant=i, reports=1)
            for i in reported}
    assert trend_series(days, END) == dumps(trend_points(days, END))
    assert trend_series(days, END, 30) == dumps(trend_points(days, END, 30))


@pytest.mark.parametrize("count", [1, 2, 30, 365, 400])
def test_last_n_points_of_the_stored_series_parse_as_the_same_points(count):
    points = trend_points({END - timedelta(days=i): SpanTally(messages=i, compliant=i // 2, reports=1) for i in range(50)}, END, 365)
    body = series.envelope(min(count, 365), series.last(dumps(points), count))
    doc = orjson.loads(body)
    assert doc["days"] == min(count, 365)
    assert doc["points"] == orjson.loads(dumps(points[-count:]))


def test_slices_of_an_empty_series_are_empty_arrays():
    assert series.last(b"[]", 30) == b"[]" and series.since(b"[]", "2026-01-01") == b"[]"


def test_history_slice_keeps_points_on_or_after_the_first_day():
    rows = [{"day": date(2026, 3, d), "score": 90.0, "grade": "A-", "compliance_rate": 1.0,
             "spf_rate": 2.0, "dkim_rate": 3.0, "total_messages": d} for d in (1, 15, 30)]
    body = dumps([history_point(r) for r in rows])
    kept = orjson.loads(series.since(body, "2026-03-15"))
    assert [p["snapshot_date"] for p in kept] == ["2026-03-15", "2026-03-30"]
    assert orjson.loads(series.since(body, "2026-04-01")) == []


def test_a_series_ends_yesterday_until_today_holds_reported_messages():
    yesterday = END - timedelta(days=1)
    days = {yesterday: SpanTally(messages=10, compliant=10, reports=1)}
    assert last_day(END, days) == yesterday and last_day(END) == yesterday
    assert last_day(END, {END: SpanTally(messages=0, compliant=0, reports=1)}, days) == yesterday
    assert last_day(END, days, {END: SpanTally(messages=3, compliant=3, reports=1)}) == END


def test_the_stored_trends_and_sparkline_have_no_zero_point_for_today(database):
    from snapshotter import jobs
    from store import snapshots
    from tests.factories import make_org
    from tests.snapshotter.reports import NOW, TODAY, report_on
    org = make_org()
    report_on(org, "example.com", TODAY - timedelta(days=1), [{"count": 5}])
    jobs.refresh_org(org.id, NOW)
    for body in (snapshots.get(org.id, "trends", "").body,
                 snapshots.get(org.id, "trends", "example.com").body):
        assert orjson.loads(body)[-1] == {
            "date": str(TODAY - timedelta(days=1)), "total_messages": 5, "compliant_messages": 5,
            "failed_messages": 0, "reports": 1, "compliance_rate": 100.0}
    health = orjson.loads(snapshots.get(org.id, "health", "example.com").body)
    assert health["trend_sparkline"][-1]["date"] == str(TODAY - timedelta(days=1))
