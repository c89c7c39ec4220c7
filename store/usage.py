"""Request metering in the database: hourly counts per organization and key, and the abuse window.

Every check is one conditional upsert whose WHERE runs under the row lock (SQLite's write lock,
Postgres's row lock on conflict), so "allow while count < limit" can never admit one too many,
whichever worker or host asks. One request is one short transaction of three small statements:
the key's hit in the abuse window, the organization's hour row, the key's hour row.
"""
from __future__ import annotations

from dataclasses import dataclass

from peewee import Case, fn

from store import db, is_postgres
from store.clock import from_epoch
from store.models import ApiKey, Event, KeyHits, Usage

HOUR = 3600
UNCAPPED = 2**31 - 1          # fits the INTEGER columns; never reached within one hour
KEEP_HOURS = 92 * 24          # the usage chart reaches back 90 days

_HIT = """
INSERT INTO key_hits (key_id, second, hits)
SELECT {p}, {p}, 1 WHERE {before} < {p}
ON CONFLICT (key_id, second) DO UPDATE SET hits = key_hits.hits + 1
WHERE key_hits.hits + {before} < {p}
RETURNING hits"""
_BEFORE = ("(SELECT COALESCE(SUM(b.hits), 0) FROM key_hits b"
           " WHERE b.key_id = {p} AND b.second > {p} AND b.second < {p})")
_ALLOW = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
VALUES ({p}, '', {p}, 1, 0, {p}, {p})
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
WHERE "usage".allowed < {p} AND "usage".heavy + excluded.heavy <= {p}
RETURNING allowed, heavy"""
# Counts a refusal on the organization's row (key_id '') or a request on a key's row.
_ADD = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + excluded.allowed, rejected = "usage".rejected + excluded.rejected,
    heavy = "usage".heavy + excluded.heavy, last_at = excluded.last_at
RETURNING allowed, heavy, allowed + rejected"""
_UNHIT = "UPDATE key_hits SET hits = hits - 1 WHERE key_id = {p} AND second = {p}"
_WINDOW = "SELECT second, hits FROM key_hits WHERE key_id = {p} AND second > {p} ORDER BY second"


@dataclass(frozen=True)
class Tally:
    """What metering one request decided, and where the organization stands after it."""
    outcome: str          # allowed, quota (hour spent), heavy (heavy budget spent), abuse
    used: int             # requests allowed this hour, this one included when allowed
    heavy_used: int       # heavy-route requests allowed this hour
    retry_after: int = 0  # seconds, on a refusal

    @property
    def allowed(self) -> bool:
        return self.outcome == "allowed"


@dataclass(frozen=True)
class Abuse:
    """The abuse control: at most `limit` requests per key in any `window` seconds."""
    limit: int = 50
    window: int = 10


def hour_of(epoch: int) -> int:
    return epoch - epoch % HOUR


def abuse_wait(hits: list[tuple[int, int]], now: int, abuse: Abuse) -> int:
    """Seconds until the sliding window has room again, given (second, hits) rows of the key."""
    for wait in range(1, abuse.window + 1):
        start = now + wait - abuse.window
        if sum(n for second, n in hits if second > start) < abuse.limit:
            return wait
    return abuse.window


def _sql(template: str) -> str:
    return template.format(p=db.param, before=_BEFORE.format(p=db.param))


def _one(sql: str, params) -> tuple | None:
    return db.execute_sql(_sql(sql), params).fetchone()


def _transaction():
    """One short write transaction; SQLite takes its write lock up front so it waits, not fails."""
    if is_postgres():
        return db.atomic()
    return db.obj.atomic("IMMEDIATE")


def _hit(key_id: str, now: int, abuse: Abuse) -> bool:
    """Count the request in the key's abuse window, unless the window is full (then False)."""
    frm = now - abuse.window
    row = _one(_HIT, (key_id, now, key_id, frm, now, abuse.limit,
                      key_id, frm, now, abuse.limit))
    return row is not None


def admit(org_id: str, key_id: str, now: int, *, limit: int | None, heavy_limit: int | None,
          heavy: bool = False, abuse: Abuse = Abuse()) -> Tally:
    """Meter one request: abuse window, then hourly quota (and heavy budget); count the outcome."""
    hour, weight = hour_of(now), int(heavy)
    limit = UNCAPPED if limit is None else limit
    heavy_limit = UNCAPPED if heavy_limit is None else heavy_limit
    with _transaction():
        if is_postgres():
            # A crash may lose the last few counts; a commit need not wait for the disk.
            db.execute_sql("SET LOCAL synchronous_commit TO OFF")
        if not _hit(key_id, now, abuse):
            tally = _refuse(org_id, hour, now, "abuse", weight=0)
            wait = abuse_wait(db.execute_sql(_sql(_WINDOW), (key_id, now - abuse.window)).fetchall(),
                              now, abuse)
            tally = Tally("abuse", tally.used, tally.heavy_used, wait)
        else:
            row = _one(_ALLOW, (org_id, hour, weight, now, limit, heavy_limit))
            if row is not None:
                tally = Tally("allowed", row[0], row[1])
            else:
                # A request refused for quota does not extend the abuse window.
                db.execute_sql(_sql(_UNHIT), (key_id, now))
                tally = _refuse(org_id, hour, now, "quota", weight)
                if tally.used < limit:
                    tally = Tally("heavy", tally.used, tally.heavy_used, tally.retry_after)
        allowed = int(tally.allowed)
        key_row = _one(_ADD, (org_id, key_id, hour, allowed, 1 - allowed, weight * allowed, now))
        if key_row[2] == 1:
            _first_of_hour(org_id, key_id, hour, now)
    return tally


def _refuse(org_id: str, hour: int, now: int, outcome: str, weight: int) -> Tally:
    row = _one(_ADD, (org_id, "", hour, 0, 1, 0, now))
    return Tally(outcome, row[0], row[1], hour + HOUR - now)


def _first_of_hour(org_id: str, key_id: str, hour: int, now: int) -> None:
    """Once per key and hour: note last use on the key, drop abuse rows and usage past 90 days."""
    ApiKey.update(last_used_at=from_epoch(now)).where(ApiKey.id == key_id).execute()
    KeyHits.delete().where(KeyHits.second < now - HOUR).execute()
    Usage.delete().where((Usage.org == org_id) & (Usage.hour < hour - KEEP_HOURS * HOUR)).execute()


def peek(org_id: str, key_id: str, now: int, *, abuse: Abuse = Abuse()) -> Tally:
    """Abuse control only, for the one request the quota does not count (the usage endpoint)."""
    hour = hour_of(now)
    with _transaction():
        admitted = _hit(key_id, now, abuse)
        wait = 0 if admitted else abuse_wait(
            db.execute_sql(_sql(_WINDOW), (key_id, now - abuse.window)).fetchall(), now, abuse)
    used, _rejected, heavy_used = hour_counts(org_id, hour)
    return Tally("allowed" if admitted else "abuse", used, heavy_used, wait)


def hour_counts(org_id: str, hour: int) -> tuple[int, int, int]:
    """(allowed, rejected, heavy) of the organization in the hour starting at `hour`."""
    row = (Usage.select(Usage.allowed, Usage.rejected, Usage.heavy)
           .where((Usage.org == org_id) & (Usage.key_id == "") & (Usage.hour == hour))
           .tuples().first())
    return tuple(row) if row else (0, 0, 0)


def record_near_cap(org_id: str, now: int, limit: int) -> bool:
    """Store the quota_near_cap event of this hour, once; True when it was new."""
    key = f"quota_near_cap:{hour_of(now)}"
    with db.atomic():
        if Event.select().where((Event.org == org_id) & (Event.dedupe_key == key)).exists():
            return False
        Event.create(org=org_id, type="quota_near_cap", severity="warning",
                     title="API quota nearly spent",
                     detail=f"10% or less of this hour's {limit:,} API requests is left; "
                            f"the quota resets at the top of the hour.",
                     dedupe_key=key, created_at=from_epoch(now))
    return True


def hourly(org_id: str, first_hour: int, last_hour: int) -> dict[int, tuple[int, int]]:
    """{hour: (allowed, rejected)} of the organization, for hours that saw any request."""
    rows = (Usage.select(Usage.hour, Usage.allowed, Usage.rejected)
            .where((Usage.org == org_id) & (Usage.key_id == "")
                   & Usage.hour.between(first_hour, last_hour)).tuples())
    return {hour: (allowed, rejected) for hour, allowed, rejected in rows}


def per_key(org_id: str, first_hour: int, last_hour: int) -> dict[str, tuple[int, int, int]]:
    """{key_id: (allowed, rejected, last_at)}: counts within the hours, last request ever kept."""
    inside = Usage.hour.between(first_hour, last_hour)
    rows = (Usage.select(Usage.key_id,
                         fn.SUM(Case(None, [(inside, Usage.allowed)], 0)),
                         fn.SUM(Case(None, [(inside, Usage.rejected)], 0)),
                         fn.MAX(Usage.last_at))
            .where((Usage.org == org_id) & (Usage.key_id != ""))
            .group_by(Usage.key_id).tuples())
    return {key_id: (int(a), int(r), int(last)) for key_id, a, r, last in rows}


def ever_metered(org_id: str) -> bool:
    """True once the organization has made its first metered request."""
    return Usage.select().where((Usage.org == org_id) & (Usage.key_id == "")).exists()
