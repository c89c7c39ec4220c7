"""Score history: one point per UTC day that has a snapshot row."""
from __future__ import annotations

from datetime import date

from rules.scores import WindowScores


def history_row(window_scores: WindowScores, day: date) -> dict | None:
    """The organization's score at the end of `day` (the window ending that day); None before
    any report."""
    s = window_scores.org(day)
    if s.score is None:
        return None
    return {"day": day, "score": s.score, "grade": s.grade, "compliance_rate": s.compliance_rate,
            "spf_rate": s.spf_rate, "dkim_rate": s.dkim_rate, "total_messages": s.tally.messages}


def backfill_days(window_scores: WindowScores, first: date) -> list[date]:
    """Days on or after `first` on which some domain had reports: the back-filled history."""
    days = set()
    for cumulative in window_scores.cumulative.values():
        days.update(d for d in cumulative.days if first <= d <= window_scores.facts.today)
    return sorted(days)


def history_point(row: dict) -> dict:
    # `snapshot_date` comes first: series.since() finds a point's day at a fixed offset.
    return {"snapshot_date": row["day"], "score": row["score"], "grade": row["grade"],
            "compliance_rate": row["compliance_rate"], "spf_rate": row["spf_rate"],
            "dkim_rate": row["dkim_rate"], "total_messages": row["total_messages"]}
