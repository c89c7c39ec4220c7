"""When a stored blob is too old to serve: something changed after it, longer ago than allowed."""
from __future__ import annotations

from datetime import datetime, time, timedelta

# The contract: overview and scores "may be up to a few minutes old", health "up to an hour".
TOLERANCE = {"overview": timedelta(minutes=5), "compliance": timedelta(minutes=5),
             "trends": timedelta(minutes=5), "history": timedelta(minutes=5),
             "health": timedelta(hours=1)}


def young(kind: str, computed_at: datetime, now: datetime) -> bool:
    """Computed within the tolerance: fresh whatever changed since (no need to ask)."""
    return now - computed_at <= TOLERANCE[kind]


def stale(kind: str, computed_at: datetime, dirty_since: datetime | None, now: datetime) -> bool:
    """A change (ingest marking the org dirty, or a new UTC day moving every window) came
    after the blob and more than the kind's tolerance ago."""
    midnight = datetime.combine(now.date(), time())
    changes = [c for c in (dirty_since, midnight) if c is not None and c >= computed_at]
    return any(now - change > TOLERANCE[kind] for change in changes)
