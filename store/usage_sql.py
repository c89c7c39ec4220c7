"""The metering statements: SQLite runs three small upserts, Postgres one prepared statement.

Templates name their values as {name}; text() turns them into the driver's named placeholders
(:name for SQLite, %(name)s for psycopg2), so every value travels as a parameter.

The abuse window is one row per key (key_hits): `ring` packs the admitted requests of the ten
seconds up to `newest`, six bits a second (a second never admits more than the limit, < 64),
the newest second lowest. Moving the ring on to a later second is a shift; the window is the
sum of the ten fields. So a hit updates one small row in place, and nothing needs pruning.
"""
from __future__ import annotations

import functools

SLOTS, BITS = 10, 6
FIELD = (1 << BITS) - 1
MAX_ABUSE_LIMIT = FIELD


def _age(now: str) -> str:
    return f"CAST({now} - key_hits.newest AS INTEGER)"


def _moved(now: str) -> str:
    """SQL: the stored ring moved on to second `now` (slot 0 = now); a late clock keeps it."""
    age = _age(now)
    keep = f"((CAST(1 AS BIGINT) << ({SLOTS * BITS} - {BITS} * {age})) - 1)"
    return (f"(CASE WHEN {age} >= {SLOTS} THEN 0 WHEN {age} <= 0 THEN key_hits.ring "
            f"ELSE (key_hits.ring & {keep}) << ({BITS} * {age}) END)")


def _window(now: str) -> str:
    """SQL: requests the key was admitted in the ten seconds up to `now`."""
    moved = _moved(now)
    return " + ".join(f"(({moved} >> {BITS * k}) & {FIELD})" for k in range(SLOTS))


# Admit one request into the key's window unless it is full; RETURNING nothing means refused.
HIT = f"""
INSERT INTO key_hits (key_id, second, newest, ring, hits) VALUES ({{key}}, {{now}}, {{now}}, 1, 1)
ON CONFLICT (key_id) DO UPDATE
SET ring = {_moved("{now}")} + 1,
    newest = CASE WHEN {{now}} > key_hits.newest THEN {{now}} ELSE key_hits.newest END,
    hits = key_hits.hits + 1
WHERE {_window("{now}")} < {{abuse}}
RETURNING hits"""
# Take back the hit of second {now}: a request refused for quota must not fill the window.
UNHIT = f"""
UPDATE key_hits SET ring = ring - (CAST(1 AS BIGINT) << ({BITS} * CAST(newest - {{now}} AS INTEGER))),
                    hits = hits - 1
WHERE key_id = {{key}} AND newest - {{now}} BETWEEN 0 AND {SLOTS - 1}
  AND ((ring >> ({BITS} * CAST(newest - {{now}} AS INTEGER))) & {FIELD}) > 0"""
RING = "SELECT newest, ring FROM key_hits WHERE key_id = {key}"
ALLOW = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
VALUES ({org}, '', {hour}, 1, 0, {weight}, {now})
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
WHERE "usage".allowed < {limit} AND "usage".heavy + excluded.heavy <= {heavy_limit}
RETURNING allowed, heavy"""
# Counts a refusal on the organization's row (key '') or a request on a key's row.
ADD = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
VALUES ({org}, {key}, {hour}, {allowed}, {rejected}, {heavy}, {now})
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + excluded.allowed, rejected = "usage".rejected + excluded.rejected,
    heavy = "usage".heavy + excluded.heavy, last_at = excluded.last_at
RETURNING allowed, heavy"""
# Postgres runs the allowed path as one statement of data-modifying CTEs, each upsert
# conditional under its row lock: hit (1 when the window took the request), then allowed and
# heavy of the organization's hour (NULL when refused: the key's row then counts a rejection
# and store.usage completes the bookkeeping). set_config makes this statement's own commit
# skip the wait for the disk: a crash may lose the last moment's counts, never admit extra.
PG_ADMIT = f"""
WITH hit AS ({HIT}
), org AS (
  INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
  SELECT {{org}}, '', {{hour}}, 1, 0, {{weight}}, {{now}} WHERE EXISTS (SELECT 1 FROM hit)
  ON CONFLICT (org_id, key_id, hour) DO UPDATE
  SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
  WHERE "usage".allowed < {{limit}} AND "usage".heavy + excluded.heavy <= {{heavy_limit}}
  RETURNING allowed, heavy
), counted AS (
  SELECT COUNT(*) AS ok FROM org
), keyed AS (
  INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
  SELECT {{org}}, {{key}}, {{hour}}, ok, 1 - ok, {{weight}} * ok, {{now}} FROM counted
  ON CONFLICT (org_id, key_id, hour) DO UPDATE
  SET allowed = "usage".allowed + excluded.allowed, rejected = "usage".rejected + excluded.rejected,
      heavy = "usage".heavy + excluded.heavy, last_at = excluded.last_at
  RETURNING 1
)
SELECT (SELECT COUNT(*) FROM hit), (SELECT allowed FROM org), (SELECT heavy FROM org)
FROM (SELECT COUNT(*) FROM keyed) AS done,
     (SELECT set_config('synchronous_commit', 'off', true)) AS async"""
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
             "allowed", "rejected", "heavy")
    return template.format(**{n: f"%({n})s" if postgres else f":{n}" for n in names})


def unpack(newest: int, ring: int) -> list[tuple[int, int]]:
    """(second, admitted) for each non-empty second of a stored ring."""
    fields = ((newest - k, (ring >> (BITS * k)) & FIELD) for k in range(SLOTS))
    return [(second, count) for second, count in fields if count]
