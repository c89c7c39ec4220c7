"""The metering statements: SQLite's three small upserts, Postgres's one prepared statement.

Table names and SQL text are constants; every value travels as a parameter. SQLite's texts
hold {p} (and {before}) for the driver's placeholder: format them with text().
"""
from __future__ import annotations

HIT = """
INSERT INTO key_hits (key_id, second, hits)
SELECT {p}, {p}, 1 WHERE {before} < {p}
ON CONFLICT (key_id, second) DO UPDATE SET hits = key_hits.hits + 1
WHERE key_hits.hits + {before} < {p}
RETURNING hits"""
BEFORE = ("(SELECT COALESCE(SUM(b.hits), 0) FROM key_hits b"
           " WHERE b.key_id = {p} AND b.second > {p} AND b.second < {p})")
ALLOW = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
VALUES ({p}, '', {p}, 1, 0, {p}, {p})
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
WHERE "usage".allowed < {p} AND "usage".heavy + excluded.heavy <= {p}
RETURNING allowed, heavy"""
# Counts a refusal on the organization's row (key_id '') or a request on a key's row.
ADD = """
INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})
ON CONFLICT (org_id, key_id, hour) DO UPDATE
SET allowed = "usage".allowed + excluded.allowed, rejected = "usage".rejected + excluded.rejected,
    heavy = "usage".heavy + excluded.heavy, last_at = excluded.last_at
RETURNING allowed, heavy, allowed + rejected"""
# Postgres runs the whole allowed path as one statement: data-modifying CTEs, each upsert
# conditional under its row lock. Columns: hit (1 when the abuse window took the request),
# allowed and heavy of the organization's hour (NULL when refused; the key's row then counts
# it as rejected and _refusal completes the bookkeeping).
PG_ADMIT = """
WITH before AS (
  SELECT COALESCE(SUM(hits), 0) AS n FROM key_hits
  WHERE key_id = %(key)s AND second > %(from)s AND second < %(now)s
), hit AS (
  INSERT INTO key_hits (key_id, second, hits)
  SELECT %(key)s, %(now)s, 1 FROM before WHERE before.n < %(abuse)s
  ON CONFLICT (key_id, second) DO UPDATE SET hits = key_hits.hits + 1
  WHERE key_hits.hits + (SELECT n FROM before) < %(abuse)s
  RETURNING hits
), org AS (
  INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
  SELECT %(org)s, '', %(hour)s, 1, 0, %(weight)s, %(now)s WHERE EXISTS (SELECT 1 FROM hit)
  ON CONFLICT (org_id, key_id, hour) DO UPDATE
  SET allowed = "usage".allowed + 1, heavy = "usage".heavy + excluded.heavy
  WHERE "usage".allowed < %(limit)s AND "usage".heavy + excluded.heavy <= %(heavy_limit)s
  RETURNING allowed, heavy
), counted AS (
  SELECT COUNT(*) AS ok FROM org
), keyed AS (
  INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at)
  SELECT %(org)s, %(key)s, %(hour)s, ok, 1 - ok, %(weight)s * ok, %(now)s FROM counted
  ON CONFLICT (org_id, key_id, hour) DO UPDATE
  SET allowed = "usage".allowed + excluded.allowed, rejected = "usage".rejected + excluded.rejected,
      heavy = "usage".heavy + excluded.heavy, last_at = excluded.last_at
  RETURNING 1
)
SELECT (SELECT COUNT(*) FROM hit), (SELECT allowed FROM org), (SELECT heavy FROM org)
FROM (SELECT COUNT(*) FROM keyed) AS done,
     -- This statement's own commit need not wait for the disk (a crash may lose a few counts).
     (SELECT set_config('synchronous_commit', 'off', true)) AS async"""
# Planning that statement costs more than running it: each pooled connection prepares it once.
PG_ARGS = (("org", "text"), ("key", "text"), ("now", "bigint"), ("from", "bigint"),
           ("abuse", "integer"), ("hour", "bigint"), ("weight", "integer"), ("limit", "integer"),
           ("heavy_limit", "integer"))


def _numbered(sql: str) -> str:
    for number, (name, _) in enumerate(PG_ARGS, 1):
        sql = sql.replace(f"%({name})s", f"${number}")
    return sql


PG_PREPARE = "PREPARE rua_admit ({}) AS {}".format(
    ", ".join(kind for _, kind in PG_ARGS), _numbered(PG_ADMIT))
PG_EXECUTE = "EXECUTE rua_admit ({})".format(", ".join(f"%({name})s" for name, _ in PG_ARGS))
UNHIT = "UPDATE key_hits SET hits = hits - 1 WHERE key_id = {p} AND second = {p}"
WINDOW = "SELECT second, hits FROM key_hits WHERE key_id = {p} AND second > {p} ORDER BY second"


def text(template: str, param: str) -> str:
    """A SQLite-style template with the driver's placeholder filled in."""
    return template.format(p=param, before=BEFORE.format(p=param))
