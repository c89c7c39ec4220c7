"""Request metering in the database: hourly counts per organization and key, and the abuse window.

Every check is a conditional upsert whose WHERE runs under a lock (SQLite's write lock,
Postgres's row lock on conflict), so "allow while count < limit" never admits one too many,
whichever worker or host asks. An allowed request counts in two rows: its key's hour (which
also holds the key's abuse window) and its organization's hour. On SQLite that is one
statement, a trigger keeping the organization's row; on Postgres one prepared statement
(store/usage_sql.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from peewee import Case, fn

from store import is_postgres, meter
from store import compiled, events, usage_sql as statements
from store.clock import from_epoch
from store.models import Usage

HOUR = 3600
UNCAPPED = 2**31 - 1          # fits the INTEGER columns; never reached within one hour
KEEP_HOURS = 92 * 24          # the usage chart reaches back 90 days


@dataclass(frozen=True)
class MeterReading:
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
    window: int = statements.SLOTS

    def __post_init__(self):
        if not (0 < self.limit <= statements.MAX_ABUSE_LIMIT and self.window == statements.SLOTS):
            raise ValueError(f"the abuse window holds up to {statements.MAX_ABUSE_LIMIT} "
                             f"requests in {statements.SLOTS} seconds")


def hour_of(epoch: int) -> int:
    return epoch - epoch % HOUR


def abuse_wait(hits: list[tuple[int, int]], now: int, abuse: Abuse) -> int:
    """Seconds until the sliding window has room again, given (second, hits) rows of the key."""
    for wait in range(1, abuse.window + 1):
        start = now + wait - abuse.window
        if sum(n for second, n in hits if second > start) < abuse.limit:
            return wait
    return abuse.window


def _run(statement: str, **params):
    return compiled.run_named(meter, statement, params)


def _writing(database):
    """A write transaction. SQLite takes its write lock at BEGIN, so a busy lock is waited for;
    a deferred transaction that read first could only fail with "database is locked"."""
    return database.atomic() if is_postgres() else database.obj.atomic("IMMEDIATE")


def _wait(params: dict, abuse: Abuse) -> int:
    """Retry-After of a request the abuse window refused, from the key's last two rings."""
    hits = [h for row in _run(statements.RINGS, **params) for h in statements.unpack(*row)]
    return abuse_wait(hits, params["now"], abuse)


def admit(org_id: str, key_id: str, now: int, *, limit: int | None, heavy_limit: int | None,
          heavy: bool = False, abuse: Abuse = Abuse()) -> MeterReading:
    """Meter one request: abuse window, then hourly quota (and heavy budget); count the outcome."""
    params = {"org": org_id, "key": key_id, "now": now, "abuse": abuse.limit,
              "hour": hour_of(now), "weight": int(heavy), "counted": 1,
              "limit": UNCAPPED if limit is None else limit,
              "heavy_limit": UNCAPPED if heavy_limit is None else heavy_limit}
    if is_postgres():
        # One statement, one round trip, committed on its own (autocommit).
        hit, used, heavy_used = statements.PG_ADMIT.run(meter, params).fetchone()
        return _settled(params, abuse, hit, used, heavy_used)
    return _sqlite_admit(params, abuse)


def _settled(params: dict, abuse: Abuse, hit, used, heavy_used) -> MeterReading:
    """Postgres: the MeterReading of a metered request, allowed when the organization's row took it
    (used), else the refusal counted in its own transaction."""
    if used is None:
        with _writing(meter):
            # A flood of refusals must not cost a disk flush each.
            meter.execute_sql("SET LOCAL synchronous_commit TO OFF")
            return _refusal(params, abuse, hit=bool(hit))
    return _allowed(params, used, heavy_used)


def _allowed(params: dict, used: int, heavy_used: int) -> MeterReading:
    if used == 1:
        _first_of_hour(params["org"], params["hour"])
    return MeterReading("allowed", used, heavy_used)


def _refusal(params: dict, abuse: Abuse, *, hit: bool) -> MeterReading:
    """Postgres: count a refused request as rejected on its key's and organization's rows; say
    which limit refused it."""
    if hit:
        # Refused for quota after the key's row took it: out of the allowed count and the window.
        _run(statements.KEY_UNDO, **params)
    else:
        _run(statements.ADD, **params, allowed=0, rejected=1, heavy=0)
    used, heavy_used = _run(statements.ADD, **{**params, "key": ""}, allowed=0, rejected=1,
                            heavy=0).fetchone()
    return _refused(params, abuse, by_abuse=not hit, used=used, heavy_used=heavy_used)


def _refused(params: dict, abuse: Abuse, *, by_abuse: bool, used: int,
             heavy_used: int) -> MeterReading:
    """The MeterReading of a refused request, already counted: which limit refused it, and when to
    try again (the abuse window's room, or the end of the hour)."""
    if by_abuse:
        return MeterReading("abuse", used, heavy_used, _wait(params, abuse))
    outcome = "quota" if used >= params["limit"] else "heavy"
    return MeterReading(outcome, used, heavy_used, params["hour"] + HOUR - params["now"])


def _sqlite_admit(params: dict, abuse: Abuse) -> MeterReading:
    """SQLite: one statement admits (usage_sql.SQLITE_ADMIT), in autocommit, so the write lock
    is held only while it runs; a refusal is settled under the write lock."""
    row = _run(statements.SQLITE_ADMIT, **params).fetchone()
    if row is not None:
        used, heavy_used = row      # the organization's row as found, before this request
        return _allowed(params, used + 1, heavy_used + params["weight"])
    with _writing(meter):
        return _sqlite_refusal(params, abuse)


def _sqlite_refusal(params: dict, abuse: Abuse) -> MeterReading:
    """A request SQLITE_ADMIT refused, asked again in one write transaction: the key's window
    first (abuse), then the organization's hour (quota, heavy budget), and counted as rejected.
    Room made meanwhile (a new hour, a window moved on) admits it after all."""
    # Each write below reaches the organization's row through the triggers.
    if _run(statements.KEY_HIT, **params).fetchone() is None:
        _run(statements.ADD, **params, allowed=0, rejected=1, heavy=0)
        used, _rejected, heavy_used = hour_counts(params["org"], params["hour"])
        return _refused(params, abuse, by_abuse=True, used=used, heavy_used=heavy_used)
    used, _rejected, heavy_used = hour_counts(params["org"], params["hour"])
    if used <= params["limit"] and heavy_used <= params["heavy_limit"]:
        return _allowed(params, used, heavy_used)
    # Out of the allowed count and the window again, counted as rejected.
    _run(statements.KEY_UNDO, **params)
    return _refused(params, abuse, by_abuse=False, used=used - 1,
                    heavy_used=heavy_used - params["weight"])


def _first_of_hour(org_id: str, hour: int) -> None:
    """Once per organization and hour: drop usage older than the chart can show."""
    Usage.delete().where((Usage.org == org_id) & (Usage.hour < hour - KEEP_HOURS * HOUR)).execute()


def peek(org_id: str, key_id: str, now: int, *, abuse: Abuse = Abuse()) -> MeterReading:
    """Abuse control only, for the one request the quota does not count (the usage endpoint)."""
    params = {"org": org_id, "key": key_id, "now": now, "abuse": abuse.limit,
              "hour": hour_of(now), "weight": 0, "counted": 0}
    admitted = _run(statements.KEY_HIT, **params).fetchone() is not None
    wait = 0 if admitted else _wait(params, abuse)
    used, _rejected, heavy_used = hour_counts(org_id, params["hour"])
    return MeterReading("allowed" if admitted else "abuse", used, heavy_used, wait)


def hour_counts(org_id: str, hour: int) -> tuple[int, int, int]:
    """(allowed, rejected, heavy) of the organization in the hour starting at `hour`."""
    row = (Usage.select(Usage.allowed, Usage.rejected, Usage.heavy)
           .where((Usage.org == org_id) & (Usage.key_id == "") & (Usage.hour == hour))
           .tuples().first())
    return tuple(row) if row else (0, 0, 0)


def record_near_cap(org_id: str, now: int, limit: int) -> bool:
    """Store the quota_near_cap event of this hour, once; True when it was new."""
    return events.raise_event(
        org_id, "quota_near_cap", f"quota_near_cap:{hour_of(now)}",
        title="API quota nearly spent",
        detail=f"10% or less of this hour's {limit:,} API requests is left; "
               f"the quota resets at the top of the hour.",
        now=from_epoch(now))


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


def last_use(kept, counted: int):
    """A key's last use: its own row keeps the day (webapp.auth), the counters' last_at the
    second for as long as they are kept; None when never used."""
    seen = [t for t in (kept, from_epoch(counted) if counted else None) if t is not None]
    return max(seen) if seen else None


def ever_metered(org_id: str) -> bool:
    """True once the organization has made its first metered request."""
    return Usage.select().where((Usage.org == org_id) & (Usage.key_id == "")).exists()
