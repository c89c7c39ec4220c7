"""Back-off for an organization's enrichment that learned nothing (DNS could not tell anything:
a dead resolver, an air-gapped host): retried after 15 minutes, doubling up to a day, instead of
being counted as done. Kept as a never-served snapshot blob, so no schema change is needed."""
from __future__ import annotations

from datetime import datetime, timedelta

from store import snapshots
from store.clock import from_epoch, to_epoch
from store.encoding import loads

KIND = "enrich_retry"          # Snapshot kind of the back-off state; never served
FIRST = timedelta(minutes=15)
LONGEST = timedelta(days=1)


def delay(attempts: int) -> timedelta:
    """The wait after `attempts` runs in a row that learned nothing: 15 min, 30 min, ... 1 day."""
    return min(FIRST * 2 ** max(attempts - 1, 0), LONGEST)


def waiting_until(org_id: str) -> datetime | None:
    """When the organization's next enrichment may run, if it is backing off."""
    blob = snapshots.get(org_id, KIND)
    return from_epoch(loads(blob.body)["after"]) if blob is not None else None


def learned_nothing(org_id: str, now: datetime) -> datetime:
    """One more run that learned nothing: back off further; when the next may run."""
    blob = snapshots.get(org_id, KIND)
    attempts = (loads(blob.body)["attempts"] if blob is not None else 0) + 1
    after = now + delay(attempts)
    snapshots.put(org_id, KIND, "", {"attempts": attempts, "after": to_epoch(after)}, now)
    return after


def learned_something(org_id: str) -> None:
    snapshots.remove(org_id, KIND)
