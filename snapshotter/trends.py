"""Trend series: one point per UTC day, oldest first, days without reports filled with zeros."""
from __future__ import annotations

import functools
from datetime import date, timedelta

from rules.rates import rate
from rules.snapshot_facts import TREND_DAYS, ZERO, SpanTally
from store.encoding import dumps

# A day without reports as orjson writes its point (trend_points): most days of a series.
ZERO_POINT = (b'{"date":"%s","total_messages":0,"compliant_messages":0,"failed_messages":0,'
              b'"reports":0,"compliance_rate":0.0}')


def merge_days(series: list[dict[date, SpanTally]]) -> dict[date, SpanTally]:
    """Day tallies of several domains added together (the organization's series)."""
    sums: dict[date, list[int]] = {}
    for days in series:
        for day, t in days.items():
            s = sums.get(day)
            if s is None:
                sums[day] = [t.messages, t.compliant, t.spf_aligned_pass, t.dkim_aligned_pass,
                             t.forwarded, t.reports]
            else:
                s[0] += t.messages
                s[1] += t.compliant
                s[2] += t.spf_aligned_pass
                s[3] += t.dkim_aligned_pass
                s[4] += t.forwarded
                s[5] += t.reports
    return {day: SpanTally(*s) for day, s in sums.items()}


def last_day(today: date, *series: dict[date, SpanTally]) -> date:
    """Where a daily series ends: today once any of `series` holds messages reported for it,
    else yesterday, the last complete day (a day reporters have not covered is no zero)."""
    if any(days.get(today, ZERO).messages for days in series):
        return today
    return today - timedelta(days=1)


def trend_point(day: date, tally: SpanTally) -> dict:
    # `date` comes first: series.since() finds a point's day at a fixed offset.
    return {"date": day, "total_messages": tally.messages,
            "compliant_messages": tally.compliant,
            "failed_messages": tally.messages - tally.compliant,
            "reports": tally.reports, "compliance_rate": rate(tally.compliant, tally.messages)}


def trend_points(days: dict[date, SpanTally], end: date, length: int = TREND_DAYS) -> list[dict]:
    """`length` points ending on `end`; a day without reports is a zero point."""
    first = end - timedelta(days=length - 1)
    points = []
    for i in range(length):
        day = first + timedelta(days=i)
        tally = days.get(day)
        points.append(trend_point(day, tally) if tally is not None else
                      {"date": day, "total_messages": 0, "compliant_messages": 0,
                       "failed_messages": 0, "reports": 0, "compliance_rate": 0.0})
    return points


def trend_series(days: dict[date, SpanTally], end: date, length: int = TREND_DAYS) -> bytes:
    """trend_points as the JSON a blob stores. Most series have few days with reports: the
    zero points are written once per refresh's day, and those days put in their place."""
    if len(days) * 4 > length:       # mostly reported days: one dumps of every point is quicker
        return dumps(trend_points(days, end, length))
    parts = list(_zero_points(end, length))
    for index, day in enumerate(series_days(end, length)):
        tally = days.get(day)
        if tally is not None:
            parts[index] = dumps(trend_point(day, tally))
    return b"[" + b",".join(parts) + b"]"


def sparkline(days: dict[date, SpanTally], end: date, length: int) -> list[dict]:
    """The health sparkline: date, compliance_rate and total_messages per day. The points of
    days without reports are made once per refresh's day and shared (never changed)."""
    points = list(_zero_sparkline(end, length))
    for index, day in enumerate(series_days(end, length)):
        tally = days.get(day)
        if tally is not None:
            points[index] = {"date": day, "compliance_rate": rate(tally.compliant, tally.messages),
                             "total_messages": tally.messages}
    return points


@functools.lru_cache(maxsize=8)
def series_days(end: date, length: int) -> tuple[date, ...]:
    """The `length` days of a series ending on `end`, oldest first."""
    first = end - timedelta(days=length - 1)
    return tuple(first + timedelta(days=i) for i in range(length))


@functools.lru_cache(maxsize=4)
def _zero_points(end: date, length: int) -> tuple[bytes, ...]:
    return tuple(ZERO_POINT % day.isoformat().encode() for day in series_days(end, length))


@functools.lru_cache(maxsize=4)
def _zero_sparkline(end: date, length: int) -> tuple[dict, ...]:
    return tuple({"date": day, "compliance_rate": 0.0, "total_messages": 0}
                 for day in series_days(end, length))
