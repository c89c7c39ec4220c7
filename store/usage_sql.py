"""The metering statements, written with named values (:name, see store/compiled.py).

A request counts in two rows of "usage": its key's hour and its organization's hour (key '').
The key's hour row also holds the key's abuse window in `ring`: the requests admitted in each
of the ten seconds up to `newest`, six bits a second, the newest lowest; in the first seconds
of an hour the previous hour's row adds its part.

The ring buys an exact abuse check in the same conditional upsert as the count: the window is
in the very row that statement locks, on both databases. A table of per-second rows would be
read outside that lock on Postgres (one too many admitted under a race) and add a row to
write and prune per request. What it costs to keep correct: a second holds at most 63
(usage.Abuse checks the limit) and the shifts below, tested field by field in
tests/store/test_usage.py.
"""
from __future__ import annotations

from store.compiled import Prepared

SLOTS, BITS = 10, 6
FIELD = (1 << BITS) - 1
MAX_ABUSE_LIMIT = FIELD         # a second never admits more than the limit: it fits a field


def _moved(row: str) -> str:
    """SQL: the row's ring moved on to second :now (slot 0 = now); a late clock keeps it."""
    age = f"CAST(:now - {row}.newest AS INTEGER)"
    kept = f"((CAST(1 AS BIGINT) << ({SLOTS * BITS} - {BITS} * {age})) - 1)"
    return (f"(CASE WHEN {age} >= {SLOTS} THEN 0 WHEN {age} <= 0 THEN {row}.ring "
            f"ELSE ({row}.ring & {kept}) << ({BITS} * {age}) END)")


def _window(row: str) -> str:
    """SQL: the requests the row's ring admitted in the ten seconds up to :now."""
    moved = _moved(row)
    return "(" + " + ".join(f"(({moved} >> {BITS * k}) & {FIELD})" for k in range(SLOTS)) + ")"


# The part of the key's window still in its previous hour (only in an hour's first seconds).
_PREVIOUS = f"""(CASE WHEN :now - :hour >= {SLOTS} THEN 0 ELSE COALESCE(
  (SELECT {_window("p")} FROM "usage" p
   WHERE p.org_id = :org AND p.key_id = :key AND p.hour = :hour - 3600), 0) END)"""


def _key_hit(room: str = "TRUE", returning: str = "allowed") -> str:
    """Admit one request into the key's window unless it is full or `room` (SQL) is false,
    counting :counted allowed (0: only filling the window). Nothing returned: refused."""
    return f"""
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
SELECT :org, :key, :hour, :counted, 0, :weight, :now, :now, 1
WHERE {_PREVIOUS} < :abuse AND {room}
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET ring = {_moved('"usage"')} + 1,
    newest = CASE WHEN :now > "usage".newest THEN :now ELSE "usage".newest END,
    allowed = "usage".allowed + :counted, heavy = "usage".heavy + :weight, last_at = :now
WHERE {_window('"usage"')} + {_PREVIOUS} < :abuse AND {room}
RETURNING {returning}"""


KEY_HIT = _key_hit()
# SQLite admits in one statement, the key's upsert also conditional on room in the
# organization's row: SQLite holds its write lock from the statement's first read to its
# commit, so nothing counts in between. RETURNING reads the organization's row as found (the
# trigger adding this request to it runs after); nothing returned: refused, settled by
# store.usage under the same lock.
_ORG_ROW = """FROM "usage" o WHERE o.org_id = :org AND o.key_id = '' AND o.hour = :hour"""
SQLITE_ADMIT = _key_hit(
    room=f"""COALESCE((SELECT o.allowed < :limit AND o.heavy + :weight <= :heavy_limit
                       {_ORG_ROW}), 1)""",
    returning=f"""COALESCE((SELECT o.allowed {_ORG_ROW}), 0),
                  COALESCE((SELECT o.heavy {_ORG_ROW}), 0)""")
# The organization refused a request its key's row took: count it rejected, out of the window.
KEY_UNDO = f"""
UPDATE "usage" SET allowed = allowed - 1, rejected = rejected + 1, heavy = heavy - :weight,
  ring = CASE WHEN newest - :now BETWEEN 0 AND {SLOTS - 1}
               AND ((ring >> ({BITS} * CAST(newest - :now AS INTEGER))) & {FIELD}) > 0
              THEN ring - (CAST(1 AS BIGINT) << ({BITS} * CAST(newest - :now AS INTEGER)))
              ELSE ring END
WHERE org_id = :org AND key_id = :key AND hour = :hour"""
# The key's rings of this hour and the one before, for Retry-After.
RINGS = """SELECT newest, ring FROM "usage"
WHERE org_id = :org AND key_id = :key AND hour IN (:hour, :hour - 3600)"""
# Counts a refusal on the organization's row (key '') or a request on a key's row.
ADD = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
VALUES (:org, :key, :hour, :allowed, :rejected, :heavy, :now, 0, 0)
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + excluded.allowed, rejected = "usage".rejected + excluded.rejected,
    heavy = "usage".heavy + excluded.heavy, last_at = excluded.last_at
RETURNING allowed, heavy"""
# Postgres: the key's conditional upsert, then the organization's, each under its row lock, in
# one statement. Columns: hit (1 when the window took it), the organization's allowed and heavy
# (NULL when refused: store.usage then takes the key's count back). Its own commit skips the
# wait for the disk: a crash may lose the last moment's counts, never admit extra.
PG_ADMIT = Prepared("rua_admit", f"""
WITH keyed AS ({KEY_HIT}
), org AS (
  INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
  SELECT :org, '', :hour, 1, 0, :weight, :now, 0, 0 WHERE EXISTS (SELECT 1 FROM keyed)
  ON CONFLICT (org_id, key_id, hour) DO UPDATE
  SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
  WHERE "usage".allowed < :limit AND "usage".heavy + excluded.heavy <= :heavy_limit
  RETURNING allowed, heavy
)
SELECT (SELECT COUNT(*) FROM keyed), (SELECT allowed FROM org), (SELECT heavy FROM org)
FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async""",
                    {"org": "text", "key": "text", "now": "bigint", "abuse": "integer",
                     "hour": "bigint", "weight": "integer", "counted": "integer",
                     "limit": "integer", "heavy_limit": "integer"})


def unpack(newest: int, ring: int) -> list[tuple[int, int]]:
    """(second, admitted) for each non-empty second of a stored ring."""
    fields = ((newest - k, (ring >> (BITS * k)) & FIELD) for k in range(SLOTS))
    return [(second, count) for second, count in fields if count]
