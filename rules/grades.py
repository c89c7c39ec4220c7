"""Bands that turn numbers into words: grades, health states, policy strength, rates."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from rules.snapshot_facts import PublishedPolicy

GRADE_BANDS = ((97, "A+"), (93, "A"), (90, "A-"), (87, "B+"), (83, "B"), (80, "B-"),
               (77, "C+"), (73, "C"), (70, "C-"), (60, "D"))
NO_GRADE = "N/A"
GRADES = tuple(g for _, g in GRADE_BANDS) + ("F", NO_GRADE)
POLICY_BASE = {"reject": 100.0, "quarantine": 50.0, "none": 0.0}
POLICIES = ("none", "quarantine", "reject")


def grade(score: float | None) -> str:
    """Letter grade of a 0-100 score; `N/A` when there is no score (no report yet)."""
    if score is None:
        return NO_GRADE
    for floor, letter in GRADE_BANDS:
        if score >= floor:
            return letter
    return "F"


def health_state(score: float | None) -> str:
    """`secure` at 80 and above, `warning` at 60, `critical` below; `nodata` without a score."""
    if score is None:
        return "nodata"
    if score >= 80:
        return "secure"
    return "warning" if score >= 60 else "critical"


def whole(score: float | None) -> int:
    """The integer shown for a score: rounded half up (73.5 shows as 74), as /compliance-score's
    two decimals would be read; 0 without a score."""
    if score is None:
        return 0
    return int(Decimal(str(score)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def policy_name(policy: PublishedPolicy | None) -> str:
    """The policy as an enum value (`none` for a missing or unreadable one)."""
    return policy.p if policy is not None and policy.p in POLICIES else "none"


def policy_strength(policy: PublishedPolicy | None) -> float:
    """reject 100, quarantine 50, none 0; pct under 100 scales the step; t=y counts as none."""
    if policy is None or policy.testing == "y":
        return 0.0
    base = POLICY_BASE.get(policy.p, 0.0)
    pct = 100 if policy.pct is None else max(0, min(100, policy.pct))
    return base * pct / 100.0
