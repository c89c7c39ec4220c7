"""Rewrites of the rollups after ingest: records re-classified when what is known of their
source changed move their messages in or out of the forwarded counts."""
from __future__ import annotations

from datetime import date

from store import snapshots
from store.models import DailyRollup, Source, SourceDomain


def add_forwarded(org_id: str, ip: str, deltas: dict[tuple[str, date], int]) -> None:
    """Add each (domain, rollup day)'s change of forwarded messages from the IP to its
    DailyRollup, SourceDomain and Source rows, and drop the day-totals cache they feed."""
    if not deltas:
        return
    # The snapshotter sums day totals again only for days with new reports: these rollups
    # changed without one, so its cache goes and every day is summed afresh.
    snapshots.remove(org_id, snapshots.DAY_TOTALS)
    for (domain, day), delta in deltas.items():
        (DailyRollup.update(forwarded=DailyRollup.forwarded + delta)
         .where(DailyRollup.org == org_id, DailyRollup.domain == domain,
                DailyRollup.day == day, DailyRollup.source_ip == ip).execute())
    by_domain: dict[str, int] = {}
    for (domain, _day), delta in deltas.items():
        by_domain[domain] = by_domain.get(domain, 0) + delta
    for domain, delta in by_domain.items():
        (SourceDomain.update(forwarded=SourceDomain.forwarded + delta)
         .where(SourceDomain.org == org_id, SourceDomain.domain == domain,
                SourceDomain.ip == ip).execute())
        (Source.update(forwarded=Source.forwarded + delta)
         .where(Source.org == org_id, Source.ip == ip).execute())
