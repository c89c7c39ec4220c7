"""The metering statements: one statement a request on SQLite, one prepared statement on Postgres.

Templates name their values as {name}; text() turns them into the driver's named placeholders
(:name for SQLite, %(name)s for psycopg2), so every value travels as a parameter.

A request counts in two rows: its key's hour and its organization's hour (key ''). Postgres
writes both in one statement, the organization's under its row lock; on SQLite one statement
writes the key's row while checking the organization's, and a trigger adds the change to the
organization's row (store/migrations.py). The key's hour row also holds the abuse window:
`ring` packs the admitted requests of the ten seconds up to `newest`, six bits a second (a
second never admits more than the limit, < 64), the newest second lowest; in the first seconds
of an hour the previous hour's row adds its part. Moving the ring on to a later second is a
shift and the window is the sum of the ten fields, so the check is one conditional upsert of
one small row.
"""
from __future__ import annotations

import functools

SLOTS, BITS = 10, 6
FIELD = (1 << BITS) - 1
MAX_ABUSE_LIMIT = FIELD - 1   # a window of FIELD requests would read as 0 (_window)


def _age(row: str, now: str) -> str:
    return f"CAST({now} - {row}.newest AS INTEGER)"


def _moved(row: str, now: str) -> str:
    """SQL: the row's ring moved on to second `now` (slot 0 = now); a late clock keeps it."""
    age = _age(row, now)
    keep = f"((CAST(1 AS BIGINT) << ({SLOTS * BITS} - {BITS} * {age})) - 1)"
    return (f"(CASE WHEN {age} >= {SLOTS} THEN 0 WHEN {age} <= 0 THEN {row}.ring "
            f"ELSE ({row}.ring & {keep}) << ({BITS} * {age}) END)")


def _window(row: str, now: str) -> str:
    """SQL: requests the row's ring admitted in the ten seconds up to `now`: the sum of its
    fields, which is the moved ring modulo 63 (64 = 1 mod 63, as 10 = 1 mod 9 sums decimal
    digits) while that sum stays below 63, which the abuse limit guarantees. Written without
    `%`, which psycopg2 would read as a placeholder."""
    moved = _moved(row, now)
    return f"({moved} - {moved} / {FIELD} * {FIELD})"


def _previous(org: str, key: str) -> str:
    """SQL: the part of the window still in the key's previous hour (non-zero in its first
    seconds); org and key are SQL expressions naming the row."""
    return f"""(CASE WHEN {{now}} - {{hour}} >= {SLOTS} THEN 0 ELSE
  COALESCE((SELECT {_window("p", "{now}")} FROM "usage" p
            WHERE p.org_id = {org} AND p.key_id = {key} AND p.hour = {{hour}} - 3600), 0) END)"""


def _key_hit(org: str, key: str, source: str = "", conflict: tuple = ("{org}", "{key}"),
             room: str = "", returning: str = "allowed") -> str:
    """Admit one request into the key's window unless it is full (or `room`, an SQL condition,
    is false), counting it as allowed (or, with {counted} 0, only filling the window);
    RETURNING nothing means refused. org and key are SQL expressions, read FROM source when one
    is named; conflict names them again where only the conflicting row is in scope."""
    also = f" AND {room}" if room else ""
    return f"""
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
SELECT {org}, {key}, {{hour}}, {{counted}}, 0, {{weight}}, {{now}}, {{now}}, 1 {source}
WHERE {_previous(org, key)} < {{abuse}}{also}
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET ring = {_moved('"usage"', "{now}")} + 1,
    newest = CASE WHEN {{now}} > "usage".newest THEN {{now}} ELSE "usage".newest END,
    allowed = "usage".allowed + {{counted}}, heavy = "usage".heavy + {{weight}},
    last_at = {{now}}
WHERE {_window('"usage"', "{now}")} + {_previous(*conflict)} < {{abuse}}{also}
RETURNING {returning}"""


KEY_HIT = _key_hit("{org}", "{key}")
# SQLite admits in one statement: the key's conditional upsert, also conditional on room in
# the organization's row of the hour. SQLite runs a writing statement under the database's
# write lock from its first read to its commit, so no other request can count between this
# check and this increment. RETURNING reads the organization's row as the statement found it
# (RETURNING is computed before AFTER triggers run: the trigger that adds this request to
# that row comes after), packed as allowed << 32 | heavy (both < 2**31); store.usage adds this
# request. Nothing returned: refused, for a reason store.usage settles under the same lock.
_ORG_ROW = """FROM "usage" o WHERE o.org_id = {org} AND o.key_id = '' AND o.hour = {hour}"""
SQLITE_ADMIT = _key_hit(
    "{org}", "{key}",
    room=f"""COALESCE((SELECT o.allowed < {{limit}} AND o.heavy + {{weight}} <= {{heavy_limit}}
                       {_ORG_ROW}), 1)""",
    returning=f"COALESCE((SELECT (o.allowed << 32) | o.heavy {_ORG_ROW}), 0)",
).replace("{counted}", "1")
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


def _prepared(name: str, template: str, args: tuple) -> tuple[str, str]:
    """PREPARE and EXECUTE texts of a statement whose values are named {name} in template."""
    prepare = "PREPARE {} ({}) AS {}".format(
        name, ", ".join(kind for _, kind in args),
        template.format(**{arg: f"${number}" for number, (arg, _) in enumerate(args, 1)}))
    return prepare, "EXECUTE {} ({})".format(name, ", ".join(f"%({arg})s" for arg, _ in args))


PG_PREPARE, PG_EXECUTE = _prepared("rua_admit", PG_ADMIT, PG_ARGS)


@functools.lru_cache(maxsize=None)
def text(template: str, postgres: bool) -> str:
    """The template with the driver's named placeholders (made once per template and driver)."""
    names = ("org", "key", "now", "abuse", "hour", "weight", "limit", "heavy_limit",
             "allowed", "rejected", "heavy", "counted")
    return template.format(**{n: f"%({n})s" if postgres else f":{n}" for n in names})


# SQLite binds numbered parameters from a tuple faster than named ones from a dict (each name
# is looked up in it): about 1 µs of the 25 the admitting statement takes in process.
SQLITE_ADMIT_ARGS = ("org", "key", "now", "abuse", "hour", "weight", "limit", "heavy_limit")


def numbered(template: str, args: tuple[str, ...]) -> str:
    """The template with SQLite's numbered placeholders (?1 for args[0], …)."""
    return template.format(**{name: f"?{number}" for number, name in enumerate(args, 1)})


def unpack(newest: int, ring: int) -> list[tuple[int, int]]:
    """(second, admitted) for each non-empty second of a stored ring."""
    fields = ((newest - k, (ring >> (BITS * k)) & FIELD) for k in range(SLOTS))
    return [(second, count) for second, count in fields if count]
