"""The metering statements: SQLite runs two small upserts, Postgres one prepared statement.

Templates name their values as {name}; text() turns them into the driver's named placeholders
(:name for SQLite, %(name)s for psycopg2), so every value travels as a parameter.

A request writes two rows: its key's hour and its organization's hour. The key's hour row
also holds the abuse window: `ring` packs the admitted requests of the ten seconds up to
`newest`, six bits a second (a second never admits more than the limit, < 64), the newest
second lowest; in the first seconds of an hour the previous hour's row adds its part. Moving
the ring on to a later second is a shift and the window is the sum of the ten fields, so the
check is one conditional upsert of one small row.
"""
from __future__ import annotations

import functools

SLOTS, BITS = 10, 6
FIELD = (1 << BITS) - 1
MAX_ABUSE_LIMIT = FIELD


def _age(row: str, now: str) -> str:
    return f"CAST({now} - {row}.newest AS INTEGER)"


def _moved(row: str, now: str) -> str:
    """SQL: the row's ring moved on to second `now` (slot 0 = now); a late clock keeps it."""
    age = _age(row, now)
    keep = f"((CAST(1 AS BIGINT) << ({SLOTS * BITS} - {BITS} * {age})) - 1)"
    return (f"(CASE WHEN {age} >= {SLOTS} THEN 0 WHEN {age} <= 0 THEN {row}.ring "
            f"ELSE ({row}.ring & {keep}) << ({BITS} * {age}) END)")


def _window(row: str, now: str) -> str:
    """SQL: requests the row's ring admitted in the ten seconds up to `now`."""
    moved = _moved(row, now)
    return " + ".join(f"(({moved} >> {BITS * k}) & {FIELD})" for k in range(SLOTS))


# The part of the window still in the key's previous hour (non-zero in its first seconds).
_PREVIOUS = f"""(CASE WHEN {{now}} - {{hour}} >= {SLOTS} THEN 0 ELSE
  COALESCE((SELECT {_window("p", "{now}")} FROM "usage" p
            WHERE p.org_id = {{org}} AND p.key_id = {{key}} AND p.hour = {{hour}} - 3600), 0) END)"""
# Admit one request into the key's window unless it is full, counting it as allowed (or, with
# {counted} 0, only filling the window); RETURNING nothing means refused.
KEY_HIT = f"""
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
SELECT {{org}}, {{key}}, {{hour}}, {{counted}}, 0, {{weight}}, {{now}}, {{now}}, 1
WHERE {_PREVIOUS} < {{abuse}}
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET ring = {_moved('"usage"', "{now}")} + 1,
    newest = CASE WHEN {{now}} > "usage".newest THEN {{now}} ELSE "usage".newest END,
    allowed = "usage".allowed + {{counted}}, heavy = "usage".heavy + {{weight}},
    last_at = {{now}}
WHERE {_window('"usage"', "{now}")} + {_PREVIOUS} < {{abuse}}
RETURNING allowed"""
# The organization refused a request its key's row took: count it rejected, out of the window.
KEY_UNDO = f"""
UPDATE "usage" SET allowed = allowed - 1, rejected = rejected + 1, heavy = heavy - {{weight}},
  ring = CASE WHEN newest - {{now}} BETWEEN 0 AND {SLOTS - 1}
               AND ((ring >> ({BITS} * CAST(newest - {{now}} AS INTEGER))) & {FIELD}) > 0
              THEN ring - (CAST(1 AS BIGINT) << ({BITS} * CAST(newest - {{now}} AS INTEGER)))
              ELSE ring END
WHERE org_id = {{org}} AND key_id = {{key}} AND hour = {{hour}}"""
# The key's rings of this hour and the one before, for Retry-After.
RINGS = """SELECT newest, ring FROM "usage"
WHERE org_id = {org} AND key_id = {key} AND hour IN ({hour}, {hour} - 3600)"""
ALLOW = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
VALUES ({org}, '', {hour}, 1, 0, {weight}, {now}, 0, 0)
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
WHERE "usage".allowed < {limit} AND "usage".heavy + excluded.heavy <= {heavy_limit}
RETURNING allowed, heavy"""
# Counts a refusal on the organization's row (key '') or a request on a key's row.
ADD = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
VALUES ({org}, {key}, {hour}, {allowed}, {rejected}, {heavy}, {now}, 0, 0)
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + excluded.allowed, rejected = "usage".rejected + excluded.rejected,
    heavy = "usage".heavy + excluded.heavy, last_at = excluded.last_at
RETURNING allowed, heavy"""
# Postgres runs the allowed path as one statement: the key's conditional upsert, then the
# organization's, each under its row lock. Columns: hit (1 when the window took the request),
# allowed and heavy of the organization's hour (NULL when refused: store.usage then undoes the
# key's count). set_config makes this statement's own commit skip the wait for the disk: a
# crash may lose the last moment's counts, never admit extra.
PG_ADMIT = f"""
WITH keyed AS ({KEY_HIT.replace("{counted}", "1")}
), org AS (
  INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
  SELECT {{org}}, '', {{hour}}, 1, 0, {{weight}}, {{now}}, 0, 0 WHERE EXISTS (SELECT 1 FROM keyed)
  ON CONFLICT (org_id, key_id, hour) DO UPDATE
  SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
  WHERE "usage".allowed < {{limit}} AND "usage".heavy + excluded.heavy <= {{heavy_limit}}
  RETURNING allowed, heavy
)
SELECT (SELECT COUNT(*) FROM keyed), (SELECT allowed FROM org), (SELECT heavy FROM org)
FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async"""
# Planning that statement costs more than running it: each pooled connection prepares it once.
PG_ARGS = (("org", "text"), ("key", "text"), ("now", "bigint"), ("abuse", "integer"),
           ("hour", "bigint"), ("weight", "integer"), ("limit", "integer"),
           ("heavy_limit", "integer"))
PG_PREPARE = "PREPARE rua_admit ({}) AS {}".format(
    ", ".join(kind for _, kind in PG_ARGS),
    PG_ADMIT.format(**{name: f"${number}" for number, (name, _) in enumerate(PG_ARGS, 1)}))
PG_EXECUTE = "EXECUTE rua_admit ({})".format(", ".join(f"%({name})s" for name, _ in PG_ARGS))


@functools.lru_cache(maxsize=None)
def text(template: str, postgres: bool) -> str:
    """The template with the driver's named placeholders (made once per template and driver)."""
    names = ("org", "key", "now", "abuse", "hour", "weight", "limit", "heavy_limit",
             "allowed", "rejected", "heavy", "counted")
    return template.format(**{n: f"%({n})s" if postgres else f":{n}" for n in names})


def unpack(newest: int, ring: int) -> list[tuple[int, int]]:
    """(second, admitted) for each non-empty second of a stored ring."""
    fields = ((newest - k, (ring >> (BITS * k)) & FIELD) for k in range(SLOTS))
    return [(second, count) for second, count in fields if count]
