"""Per-domain day totals summed from DailyRollup, kept between refreshes as a private blob.

DomainDay counts the reports of each (domain, day); a cached total remembers the report count
it was summed at, so only the days whose count changed are summed again. A refresh after one
more day of reports therefore reads that day's rollups, not the whole year's. This relies on
ingest's rule that rollups only change together with a report counted in DomainDay.reports
(one transaction); deleting the cache blob makes the next refresh sum every day again.
"""
from __future__ import annotations

from array import array
from datetime import date
from itertools import chain

import orjson
from peewee import fn

from store.clock import stored_date
from store.models import DailyRollup
from store.snapshots import DAY_TOTALS

CACHE_KIND = DAY_TOTALS       # Snapshot kind of the cache; never served
LIST_LIMIT = 64               # beyond this many days or domains, filter by range instead of IN
Totals = dict  # (domain, day) -> (reports, messages, compliant, spf, dkim, forwarded)
WIDTH = 8      # int64 values per cached row


def load(body: bytes | None) -> Totals:
    """The cache: a JSON list of domain names, a newline, then int64 rows
    (domain index, day ordinal, reports, messages, compliant, spf, dkim, forwarded)."""
    if not body or b"\n" not in body:
        return {}
    head, _, packed = body.partition(b"\n")
    try:
        names = orjson.loads(head)
        values = array("q")
        values.frombytes(packed)
    except (orjson.JSONDecodeError, ValueError):
        return {}      # an unreadable cache is rebuilt from the rollups
    columns = [values[k::WIDTH] for k in range(WIDTH)]       # C-speed slices, then zips
    days = {o: date.fromordinal(o) for o in set(columns[1])}
    keys = zip(map(names.__getitem__, columns[0]), map(days.__getitem__, columns[1]))
    return dict(zip(keys, zip(*columns[2:])))


def dump(totals: Totals) -> bytes:
    names = sorted({domain for domain, _ in totals})
    index = {name: i for i, name in enumerate(names)}
    rows = ((index[domain], day.toordinal(), *row) for (domain, day), row in totals.items())
    return orjson.dumps(names) + b"\n" + array("q", chain.from_iterable(rows)).tobytes()


def stale_pairs(report_counts: dict, cached: Totals) -> list[tuple[str, date]]:
    """(domain, day) pairs whose cached total was summed at another report count (or never)."""
    return [key for key, reports in report_counts.items()
            if key not in cached or cached[key][0] != reports]


def sum_rollups(org_id: str, pairs: list[tuple[str, date]]) -> dict:
    """Sums of DailyRollup per (domain, day) for the given pairs, in one grouped query."""
    if not pairs:
        return {}
    days = sorted({day for _, day in pairs})
    domains = sorted({domain for domain, _ in pairs})
    query = (DailyRollup
             .select(DailyRollup.domain, DailyRollup.day, fn.SUM(DailyRollup.messages),
                     fn.SUM(DailyRollup.compliant), fn.SUM(DailyRollup.spf_aligned_pass),
                     fn.SUM(DailyRollup.dkim_aligned_pass), fn.SUM(DailyRollup.forwarded))
             .where(DailyRollup.org == org_id))
    if len(days) <= LIST_LIMIT:
        query = query.where(DailyRollup.day.in_(days))
    else:
        query = query.where(DailyRollup.day.between(days[0], days[-1]))
    if len(domains) <= LIST_LIMIT:
        query = query.where(DailyRollup.domain.in_(domains))
    wanted = set(pairs)
    sums = {}
    for domain, day, *values in query.group_by(DailyRollup.domain, DailyRollup.day).tuples():
        day = stored_date(day)
        if (domain, day) in wanted:
            sums[(domain, day)] = [int(v or 0) for v in values]
    return sums


def refresh(org_id: str, report_counts: dict, cached: Totals) -> tuple[Totals, int]:
    """Totals for exactly the (domain, day) pairs in report_counts; (totals, pairs summed again)."""
    stale = stale_pairs(report_counts, cached)
    sums = sum_rollups(org_id, stale)
    totals = {}
    for key, reports in report_counts.items():
        if key in sums:
            totals[key] = (reports, *sums[key])
        elif key in cached and cached[key][0] == reports:
            totals[key] = cached[key]
        else:
            totals[key] = (reports, 0, 0, 0, 0, 0)     # counted reports without records
    return totals, len(stale)
