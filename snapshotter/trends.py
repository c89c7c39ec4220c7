"""Trend series: one point per UTC day, oldest first, days without reports filled with zeros."""
from __future__ import annotations

from datetime import date, timedelta

from rules.rates import rate
from rules.snapshot_facts import TREND_DAYS, ZERO, SpanTally


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


def sparkline(days: dict[date, SpanTally], end: date, length: int) -> list[dict]:
    """The health sparkline: date, compliance_rate and total_messages per day."""
    first = end - timedelta(days=length - 1)
    points = []
    for i in range(length):
        tally = days.get(first + timedelta(days=i), ZERO)
        points.append({"date": first + timedelta(days=i),
                       "compliance_rate": rate(tally.compliant, tally.messages),
                       "total_messages": tally.messages})
    return points
