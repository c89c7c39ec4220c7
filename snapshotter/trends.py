"""Trend series: one point per UTC day, oldest first, days without reports filled with zeros."""
from __future__ import annotations

from datetime import date, timedelta

from snapshotter.grades import rate
from snapshotter.model import TREND_DAYS, ZERO, Tally


def merge_days(series: list[dict[date, Tally]]) -> dict[date, Tally]:
    """Day tallies of several domains added together (the organization's series)."""
    merged: dict[date, Tally] = {}
    for days in series:
        for day, tally in days.items():
            merged[day] = merged[day] + tally if day in merged else tally
    return merged


def trend_point(day: date, tally: Tally) -> dict:
    # `date` comes first: series.since() finds a point's day at a fixed offset.
    return {"date": day, "total_messages": tally.messages,
            "compliant_messages": tally.compliant,
            "failed_messages": tally.messages - tally.compliant,
            "reports": tally.reports, "compliance_rate": rate(tally.compliant, tally.messages)}


def trend_points(days: dict[date, Tally], end: date, length: int = TREND_DAYS) -> list[dict]:
    """`length` points ending on `end`; a day without reports is a zero point."""
    first = end - timedelta(days=length - 1)
    return [trend_point(first + timedelta(days=i), days.get(first + timedelta(days=i), ZERO))
            for i in range(length)]


def sparkline(days: dict[date, Tally], end: date, length: int) -> list[dict]:
    """The health sparkline: date, compliance_rate and total_messages per day."""
    first = end - timedelta(days=length - 1)
    points = []
    for i in range(length):
        tally = days.get(first + timedelta(days=i), ZERO)
        points.append({"date": first + timedelta(days=i),
                       "compliance_rate": rate(tally.compliant, tally.messages),
                       "total_messages": tally.messages})
    return points
