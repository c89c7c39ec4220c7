"""How much disk a store takes per million records, on SQLite and Postgres, before and after a
`rua prune` of half of its records.

Each store is filled by bench/store_fill.py (the demo's reports through the real ingest path:
~7 records a report, as real reporters send for small and mid-sized domains). Then `rua prune
--days D` deletes the records of the older half of the reports (D chosen from the store).
Sizes: SQLite, the store's file after a WAL checkpoint (the prune gives freed pages back by
incremental vacuum); Postgres, pg_total_relation_size of every table (tables, indexes, TOAST)
after the prune and a VACUUM (space reusable, files not shrunk), then after VACUUM FULL (what
the rows left take). From the two sizes: bytes a record costs, and bytes a report costs
beside its records (summary, rollups, sources), which is what retention keeps.

Run: .venv/bin/python bench/storage.py [--records 1000000] [--no-postgres]
     [--postgres postgresql://postgres@127.0.0.1:5432/postgres]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from urllib.parse import urlparse, urlunparse

ROOT = pathlib.Path(__file__).resolve().parents[1]
FILL = ROOT / "bench" / "store_fill.py"
RUA = str(pathlib.Path(sys.executable).with_name("rua"))
BENCH_DB = "rua_storage_bench"
MB = 1024 * 1024


def fill(url: str, records: int, lock_dir: str) -> tuple[int, int, int, float]:
    """(reports, records, days, seconds) of a store filled by today's code."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(FILL), url, str(records), lock_dir], cwd=ROOT,
                          env=_env(url, lock_dir), capture_output=True, text=True, check=True)
    reports, stored, days = (int(n) for n in done.stdout.split())
    return reports, stored, days, time.perf_counter() - started


def _env(url: str, lock_dir: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=url, RUA_LOCK_DIR=lock_dir, RUA_OFFLINE="1")
    return env


def half_cutoff_days(rows: list[tuple[str, int]], total: int) -> int:
    """Days of retention that keep the newer half of the records: rows are (day_end, records)
    oldest first."""
    seen = 0
    for day, count in rows:
        seen += count
        if seen >= total / 2:
            today = datetime.now(timezone.utc).date()
            return (today - date.fromisoformat(str(day)[:10])).days
    raise ValueError("no records")


def prune(url: str, lock_dir: str, days: int) -> tuple[str, float]:
    started = time.perf_counter()
    done = subprocess.run([RUA, "prune", "--days", str(days)], env=_env(url, lock_dir),
                          capture_output=True, text=True, check=True)
    return done.stdout.strip().replace("\n", "; "), time.perf_counter() - started


RECORDS_BY_DAY = ("SELECT day_end, sum(record_count) FROM report GROUP BY day_end "
                  "ORDER BY day_end")


def sqlite_run(records: int) -> list[tuple[str, float, int, int]]:
    with tempfile.TemporaryDirectory(prefix="rua-storage-") as folder:
        path = pathlib.Path(folder) / "rua.db"
        url = f"sqlite:///{path}"
        reports, stored, days, seconds = fill(url, records, folder)
        print(f"SQLite: filled {reports:,} reports, {stored:,} records over {days:,} days "
              f"in {seconds:.0f} s")
        with sqlite3.connect(path) as con:
            rows = con.execute(RECORDS_BY_DAY).fetchall()
        before = _sqlite_size(path)
        line, seconds = prune(url, folder, half_cutoff_days(rows, stored))
        print(f"SQLite: rua prune in {seconds:.1f} s: {line}")
        after = _sqlite_size(path)
        kept = _count(sqlite3.connect(path), "SELECT count(*) FROM record")
        return [("SQLite before prune", before, stored, reports),
                ("SQLite after prune (incremental vacuum)", after, kept, reports)]


def _sqlite_size(path: pathlib.Path) -> int:
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    files = [path, path.with_name(path.name + "-wal"), path.with_name("rua.meter.db")]
    return sum(f.stat().st_size for f in files if f.exists())


def _count(con, sql: str) -> int:
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def postgres_run(records: int, server: str) -> list[tuple[str, float, int, int]]:
    import psycopg2
    admin = psycopg2.connect(server)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}"')   # a constant name, not input
        cur.execute(f'CREATE DATABASE "{BENCH_DB}"')
    url = urlunparse(urlparse(server)._replace(path=f"/{BENCH_DB}"))
    try:
        with tempfile.TemporaryDirectory(prefix="rua-storage-") as folder:
            reports, stored, days, seconds = fill(url, records, folder)
            print(f"Postgres: filled {reports:,} reports, {stored:,} records over {days:,} days "
                  f"in {seconds:.0f} s")
            con = psycopg2.connect(url)
            con.autocommit = True
            with con.cursor() as cur:
                cur.execute("VACUUM ANALYZE")
                before = _pg_size(con)
                cur.execute("VACUUM FULL")
                before_compact = _pg_size(con)
                cur.execute(RECORDS_BY_DAY)
                rows = cur.fetchall()
            line, seconds = prune(url, folder, half_cutoff_days(rows, stored))
            print(f"Postgres: rua prune in {seconds:.1f} s: {line}")
            with con.cursor() as cur:
                cur.execute("VACUUM ANALYZE")
                after = _pg_size(con)
                cur.execute("VACUUM FULL")
                compact = _pg_size(con)
                cur.execute("SELECT count(*) FROM record")
                kept = cur.fetchone()[0]
            con.close()
        return [("Postgres before prune", before, stored, reports),
                ("Postgres before prune, VACUUM FULL", before_compact, stored, reports),
                ("Postgres after prune + VACUUM", after, kept, reports),
                ("Postgres after VACUUM FULL", compact, kept, reports)]
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}"')
        admin.close()


def _pg_size(con) -> int:
    with con.cursor() as cur:
        cur.execute("SELECT sum(pg_total_relation_size(relid)) FROM pg_stat_user_tables")
        return int(cur.fetchone()[0])


def model(before: tuple, after: tuple) -> tuple[float, float]:
    """(bytes a record costs, bytes a report costs beside its records) from two sizes."""
    _, size_before, records_before, reports = before
    _, size_after, records_after, _ = after
    per_record = (size_before - size_after) / (records_before - records_after)
    per_report = (size_after - records_after * per_record) / reports
    return per_record, per_report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="a server where the bench may create and drop " + BENCH_DB)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    rows = sqlite_run(args.records)
    models = {"SQLite": model(rows[0], rows[1])}
    if not args.no_postgres:
        pg = postgres_run(args.records, args.postgres)
        rows += pg
        models["Postgres (VACUUM FULL)"] = model(pg[1], pg[3])
    print(f"\n{'store':42} {'MB':>9} {'records':>11} {'MB per million records':>22}")
    for name, size, records, _ in rows:
        print(f"{name:42} {size / MB:9.1f} {records:11,} {size / MB / records * 1e6:22.0f}")
    print()
    for name, (per_record, per_report) in models.items():
        print(f"{name}: {per_record:.0f} bytes a record, {per_report:.0f} bytes a report "
              "beside its records (kept by retention)")


if __name__ == "__main__":
    main()
