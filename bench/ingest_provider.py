"""Ingest at a provider's size on Postgres: a day of reports for 200 organizations x 25 domains
(5,000 domains, about 5 reporters each), routed by domain; prints figures, asserts nothing.

    .venv/bin/python bench/ingest_provider.py --database-url postgresql://USER@HOST/SCRATCH_DB
        [--scale 1.0] [--processes 2] [--routing-only]

The database is a scratch one: its tables are dropped first. The reports are demo/'s (one
generated day of its four sites, each domain given one site's reports with its own name), written
as files and ingested by `ingest_paths` without --org (so every report is routed), split over
--processes worker processes; the day before is stored first, unmeasured, and ANALYZEd.
Printed: reports/s, Postgres time per report (`active_time` of pg_stat_database before and
after, with transactions, tuples and blocks per report), the CPU time per report of the
workers and of their Postgres backends (read from /proc when the server runs on this machine:
on a loaded machine the one figure that waiting for a CPU does not inflate) and the statements
they sent, what one routing look-up costs, and each table's index size against its table size. --scale 0.1 is 20
organizations (500 domains); --routing-only builds the organizations and domains and times
routing alone (--scale 10: 50,000 domains). The floor printed beside them: parsing alone and an
empty transaction, which any design pays per report, and bench/ingest.py's floor (floor_writes:
each file parsed, then only its report's row and records written, one transaction per 1,000
reports) on the same two days' files with as many processes, into a database of its own on the
same server (the scratch database's name + "_floor", made afresh and dropped after): its
reports/s, rua's as a share of it, and the same CPU, statement and Postgres figures. Then the
sizes of `source`'s indexes, and per table how many updates were HOT (in place, no index
touched) and what autovacuum did: say whether the server runs it (Postgres ships with it on).
Goals (issue 38): 500 reports/s with 2 processes; no table's indexes larger than twice it.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import random
import resource
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORGS, DOMAINS_PER_ORG = 200, 25
DAY = dt.date(2026, 1, 15)
STATS = ("xact_commit", "tup_returned", "tup_fetched", "tup_inserted", "tup_updated",
         "blks_hit", "blks_read", "active_time")


def domain_names(scale: float) -> list[tuple[str, list[str]]]:
    """(organization name, its domains) for the scaled number of organizations."""
    orgs = max(1, round(ORGS * scale))
    return [(f"org{o}", [f"d{d}.org{o}.example" for d in range(DOMAINS_PER_ORG)])
            for o in range(orgs)]


def write_reports(folder: pathlib.Path, orgs, day: dt.date,
                  reporters: int | None = None) -> list[str]:
    """One day of demo/'s reports for every domain: each domain takes the reports of one of the
    demo's sites (about 5 reporters, or the first `reporters`), with its own name in them."""
    from demo.reports import generate
    templates: dict[str, list] = {}
    for report in generate(seed=day.toordinal(), days=1, end=day):
        templates.setdefault(report.domain, []).append(report)
    sites = sorted(templates)
    paths = []
    for number, (_, domains) in enumerate(orgs):
        for index, domain in enumerate(domains):
            site = sites[(number + index) % len(sites)]
            for report in templates[site][:reporters]:
                path = folder / f"{report.reporter.host}!{domain}!{report.day}.xml"
                path.write_text(report.xml.replace(site, domain), encoding="utf-8")
                paths.append(str(path))
    random.Random(2).shuffle(paths)       # reports arrive in no order of organization
    return paths


def build_store(url: str, orgs) -> None:
    """Empty the scratch database, migrate it, add the organizations and their domains."""
    from store import open_db
    from store.migrations import migrate
    from store.models import Domain, Organization
    database = open_db(url)
    with database.connection_context():
        database.execute_sql("DROP SCHEMA public CASCADE")
        database.execute_sql("CREATE SCHEMA public")
        migrate(database)
        with database.atomic():
            for name, domains in orgs:
                org = Organization.create(name=name, plan="unlimited")
                Domain.insert_many([{"org": org.id, "name": d, "source": "manual"}
                                    for d in domains]).execute()
        database.execute_sql("ANALYZE")   # as autovacuum would have by then
    database.close_all()


def worker(url: str, floor: bool) -> None:
    """Ingest the files named on stdin (routed), or with floor write them as bench/ingest.py's
    floor does into the floor's organization; print the counts, and the CPU seconds this
    process and its Postgres backend spent on them (the backend's None unless the server runs
    on this machine, where /proc shows it)."""
    from config import Config
    from store import open_db
    files = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as folder:
        config = Config(database_url=url, offline=True, lock_dir=folder)
        database = open_db(url)
        with database.connection_context():
            backend = database.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
            work = floor_work(database, config) if floor else rua_work(config)
            sent = counting_statements(database)
            started, backend_started = cpu_seconds(), process_cpu_seconds(backend)
            counts = work(files)
            spent, backend_spent = cpu_seconds() - started, process_cpu_seconds(backend)
        database.close_all()
    if backend_started is not None and backend_spent is not None:
        backend_spent -= backend_started
    print(json.dumps({"counts": counts, "cpu": spent, "backend_cpu": backend_spent,
                      "statements": sent[0]}))


def rua_work(config):
    """rua's ingest of files, routed: {status: reports}."""
    from ingest.pipeline import ingest_paths

    def work(files: list[str]) -> dict:
        results = list(ingest_paths(files, config=config))
        statuses = [r.status for r in results]
        for result in results:
            if result.status == "refused":    # said, so a refusal in a benchmark is looked into
                print(f"refused {result.path}: {result.error}", file=sys.stderr)
        return {s: statuses.count(s) for s in set(statuses)}
    return work


def floor_work(database, config):
    """bench/ingest.py's floor on files, into the floor store's organization (floor_store
    made it): {"stored": files read, "refused": files not}."""
    from bench.ingest import floor_writes
    from store.models import Organization
    org = Organization.get(Organization.name == "bench").id

    def work(files: list[str]) -> dict:
        _, _, accepted, rejected = floor_writes(database, files, config, org,
                                                tag=f"{os.getpid()}-")
        return {"stored": accepted, "refused": rejected}
    return work


def floor_database(url: str) -> str:
    """Make the floor's database afresh beside the scratch one (its name + "_floor"), with the
    store's schema and the floor's organization; its URL."""
    from psycopg2 import sql as pg
    from bench.ingest import floor_store
    from store import open_db
    parts = urllib.parse.urlsplit(url)
    name = pg.Identifier(parts.path.lstrip("/") + "_floor")
    floor_url = urllib.parse.urlunsplit(parts._replace(path=parts.path + "_floor"))
    outside_transaction(url, pg.SQL("DROP DATABASE IF EXISTS {}").format(name),
                        pg.SQL("CREATE DATABASE {}").format(name))
    database = open_db(floor_url)
    with database.connection_context():
        floor_store(database)
    database.close_all()
    return floor_url


def drop_database(url: str, floor_url: str) -> None:
    """Drop the floor's database (from a connection to the scratch one)."""
    from psycopg2 import sql as pg
    name = pg.Identifier(urllib.parse.urlsplit(floor_url).path.lstrip("/"))
    outside_transaction(url, pg.SQL("DROP DATABASE IF EXISTS {}").format(name))


def outside_transaction(url: str, *statements) -> None:
    """Run statements on url in autocommit: CREATE and DROP DATABASE refuse a transaction."""
    import psycopg2
    connection = psycopg2.connect(url)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
    finally:
        connection.close()


def counting_statements(database) -> list[int]:
    """A one-item list that counts the statements rua sends through the database from now on
    (its driver's BEGIN and COMMIT aside)."""
    sent = [0]
    execute = database.execute_sql

    def counted(*args, **kwargs):
        sent[0] += 1
        return execute(*args, **kwargs)
    database.execute_sql = counted
    return sent


def cpu_seconds() -> float:
    """CPU seconds this process has used, in user and system time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu_seconds(pid: int) -> float | None:
    """CPU seconds another process of this machine has used; None when /proc does not show it
    (the Postgres server runs elsewhere)."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def analyze(url: str) -> None:
    from store import open_db
    database = open_db(url)
    with database.connection_context():
        database.execute_sql("ANALYZE")
    database.close_all()


def pg_stats(url: str) -> dict:
    from store import open_db
    database = open_db(url)
    with database.connection_context():
        row = database.execute_sql(
            "SELECT xact_commit, tup_returned, tup_fetched, tup_inserted, tup_updated, "
            "blks_hit, blks_read, active_time FROM pg_stat_database "
            "WHERE datname = current_database()").fetchone()
    database.close_all()
    return dict(zip(STATS, (float(v) for v in row)))


def sizes(url: str) -> list[tuple[str, int, int]]:
    """(table, table bytes, index bytes) of every table, largest first."""
    from store import open_db
    database = open_db(url)
    with database.connection_context():
        database.execute_sql("SELECT pg_stat_force_next_flush()")
        rows = database.execute_sql(
            "SELECT relname, pg_table_size(oid), pg_indexes_size(oid) FROM pg_class "
            "WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace "
            "ORDER BY pg_total_relation_size(oid) DESC").fetchall()
    database.close_all()
    return rows


def updates(url: str) -> tuple[str, list[tuple]]:
    """The server's autovacuum setting, and per table written to: (table, rows updated, of them
    HOT, dead rows now, autovacuum runs), most updated first."""
    from store import open_db
    database = open_db(url)
    with database.connection_context():
        autovacuum = database.execute_sql("SHOW autovacuum").fetchone()[0]
        rows = database.execute_sql(
            "SELECT relname, n_tup_upd, n_tup_hot_upd, n_dead_tup, autovacuum_count "
            "FROM pg_stat_user_tables WHERE n_tup_upd > 0 ORDER BY n_tup_upd DESC").fetchall()
    database.close_all()
    return autovacuum, rows


def index_sizes(url: str, table: str) -> list[tuple[str, int]]:
    """(index, bytes) of one table's indexes, largest first."""
    from store import open_db
    database = open_db(url)
    with database.connection_context():
        rows = database.execute_sql(
            "SELECT indexrelname, pg_relation_size(indexrelid) FROM pg_stat_user_indexes "
            "WHERE relname = %s ORDER BY 2 DESC", (table,)).fetchall()
    database.close_all()
    return rows


def routing_cost(url: str, orgs, lookups: int = 1000) -> tuple[float, float, float]:
    """Milliseconds of one routing look-up of a random monitored domain: ingest/routing.route
    as a whole (Python, round trip, planning), and Postgres's planning and execution of its
    query (EXPLAIN ANALYZE)."""
    from ingest import routing
    from store import open_db
    names = [d for _, domains in orgs for d in domains]
    pick = random.Random(3)
    database = open_db(url)
    with database.connection_context():
        routing.route(names[0])
        started = time.perf_counter()
        for _ in range(lookups):
            routing.route(pick.choice(names))
        seconds = time.perf_counter() - started
        planning = execution = 0.0
        for _ in range(200):
            query, params = routing._MONITORING.build(name=pick.choice(names)).sql()
            plan = database.execute_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + query,
                                        params).fetchone()[0][0]
            planning += plan["Planning Time"] / 200
            execution += plan["Execution Time"] / 200
    database.close_all()
    return seconds * 1000 / lookups, planning, execution


def alone(url: str, files: list[str]) -> tuple[float, float]:
    """(ms to parse one report alone, ms of one empty transaction round trip)."""
    from config import Config
    from ingest.files import iter_documents
    from ingest.xml_report import parse
    from store import open_db
    config = Config(database_url=url)
    sample = files[:500]
    started = time.perf_counter()
    for path in sample:
        for item in iter_documents(path, max_bytes=config.max_report_bytes,
                                   max_depth=config.max_archive_depth):
            for _ in parse(item).records:
                pass
    parse_ms = (time.perf_counter() - started) * 1000 / len(sample)
    database = open_db(url)
    with database.connection_context():
        started = time.perf_counter()
        for _ in range(500):
            with database.atomic():
                database.execute_sql("SELECT 1")
        empty_ms = (time.perf_counter() - started) * 1000 / 500
    database.close_all()
    return parse_ms, empty_ms


def run_workers(url: str, files: list[str], processes: int,
                floor: bool = False) -> tuple[float, dict, dict]:
    """Seconds the workers (rua's ingest, or with floor the floor's writes) took, the reports'
    statuses, and the CPU seconds they and their Postgres backends spent ("cpu", "backend_cpu":
    None when not on this machine), and the statements they sent."""
    chunks = [files[n::processes] for n in range(processes)]
    started = time.perf_counter()
    children = []
    command = [sys.executable, __file__, "--worker", "--database-url", url]
    for chunk in chunks:
        child = subprocess.Popen(command + ["--floor"] * floor,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
        child.stdin.write(json.dumps(chunk).encode())
        child.stdin.close()
        children.append(child)
    counts: dict[str, int] = {}
    cpu: dict = {"cpu": 0.0, "backend_cpu": 0.0, "statements": 0}
    for child in children:
        out = child.stdout.read()
        if child.wait() != 0:
            raise SystemExit("a worker failed")
        told = json.loads(out)
        for status, count in told["counts"].items():
            counts[status] = counts.get(status, 0) + count
        for name in cpu:
            cpu[name] = None if None in (cpu[name], told[name]) else cpu[name] + told[name]
    return time.perf_counter() - started, counts, cpu


def measured_day(url: str, files: list[str], processes: int, floor: bool) -> dict:
    """One day's files stored by rua (or the floor) with processes workers: reports/s, the
    counts, CPU ms per report of the workers and of their backends (None: not shown), and
    per report the statements sent and pg_stat_database's figures."""
    before = pg_stats(url)
    seconds, counts, cpu = run_workers(url, files, processes, floor)
    time.sleep(1.0)                     # the workers' statistics reach pg_stat_database
    after = pg_stats(url)
    reports = max(counts.get("stored", 0), 1)
    backend = cpu["backend_cpu"]
    return {"rate": len(files) / seconds, "seconds": seconds, "counts": counts,
            "cpu_ms": cpu["cpu"] * 1000 / reports,
            "backend_ms": None if backend is None else backend * 1000 / reports,
            "statements": cpu["statements"] / reports,
            "per": {name: (after[name] - before[name]) / reports for name in STATS}}


def print_day(label: str, day: dict) -> None:
    """A measured day's lines: rate, Postgres per report, CPU per report."""
    per = day["per"]
    backend = ("not shown (the server is not on this machine)" if day["backend_ms"] is None
               else f"{day['backend_ms']:.2f} ms")
    print(f"{label}: {day['rate']:,.0f} reports/s ({day['seconds']:.1f} s); Postgres per report: "
          f"{per['active_time']:.2f} ms active, {per['xact_commit']:.2f} transactions, "
          f"{per['tup_inserted']:.1f} rows inserted, {per['tup_updated']:.1f} updated, "
          f"{per['tup_returned']:.0f} tuples returned, "
          f"{per['blks_hit'] + per['blks_read']:.0f} blocks")
    print(f"  CPU per report: {day['cpu_ms']:.2f} ms in its processes, their Postgres backends "
          f"{backend} (what a loaded machine changes least); {day['statements']:.1f} "
          "statements sent")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True,
                        help="a scratch Postgres database (its tables are dropped)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="organizations = 200 x scale, 25 domains each (default 1.0)")
    parser.add_argument("--processes", type=int, default=2, help="ingest processes (default 2)")
    parser.add_argument("--routing-only", action="store_true",
                        help="build the organizations and domains and time routing alone")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.database_url, args.floor)
        return
    url = args.database_url
    orgs = domain_names(args.scale)
    domains = sum(len(d) for _, d in orgs)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{len(orgs)} organizations, {domains:,} domains")
    build_store(url, orgs)
    whole, planning, execution = routing_cost(url, orgs)
    print(f"routing at {domains:,} domains: {whole:.3f} ms a look-up as ingest makes it; "
          f"Postgres plans its query in {planning:.3f} ms and runs it in {execution:.3f} ms "
          "(goal: well under 0.1 ms at 50,000 domains)")
    if args.routing_only:
        return
    floor_url = floor_database(url)
    try:
        with tempfile.TemporaryDirectory(prefix="rua-bench-provider-") as folder:
            # The day before first, not measured: a provider's store holds reports already, and
            # Postgres has planned with its statistics of them (ANALYZE, as autovacuum does).
            # The floor's store gets it too, so both measured days write into indexes as full.
            earlier = pathlib.Path(folder) / "before"
            earlier.mkdir()
            before_files = write_reports(earlier, orgs, DAY - dt.timedelta(days=1))
            warm, _, _ = run_workers(url, before_files, args.processes)
            floor_warm, _, _ = run_workers(floor_url, before_files, args.processes, floor=True)
            analyze(url)
            analyze(floor_url)
            print(f"the day before stored in {warm:.1f} s by rua, {floor_warm:.1f} s by the "
                  "floor (not measured), then ANALYZE", flush=True)
            files = write_reports(pathlib.Path(folder), orgs, DAY)
            rua = measured_day(url, files, args.processes, floor=False)
            floor = measured_day(floor_url, files, args.processes, floor=True)
            parse_ms, empty_ms = alone(url, files)
    finally:
        drop_database(url, floor_url)
    print(f"\n{len(files):,} reports (one day), {args.processes} processes; load average "
          f"{os.getloadavg()[0]:.2f}")
    print_day("rua", rua)
    print_day("floor", floor)
    print(f"rua {rua['rate']:,.0f} reports/s (goal >= 500) against the floor's "
          f"{floor['rate']:,.0f}: {rua['rate'] / floor['rate']:.2f} of it; {rua['counts']}")
    if rua["backend_ms"] is not None and floor["backend_ms"] is not None:
        cpus = os.cpu_count()
        spent = {name: day["cpu_ms"] + day["backend_ms"] for name, day in
                 (("rua", rua), ("floor", floor))}
        print(f"CPU per report, processes and backends: rua {spent['rua']:.2f} ms, the floor "
              f"{spent['floor']:.2f} ms ({spent['rua'] / spent['floor']:.1f}x); all {cpus} CPUs "
              f"would allow rua {cpus * 1000 / spent['rua']:,.0f} reports/s and the floor "
              f"{cpus * 1000 / spent['floor']:,.0f}")
    print(f"alone, per report: parsing one report {parse_ms:.2f} ms; an empty transaction "
          f"{empty_ms:.2f} ms (one process)")
    rows = sizes(url)
    tables = sum(r[1] for r in rows)
    indexes = sum(r[2] for r in rows)
    # A table of a few pages has indexes of as many: only tables of a megabyte or more count.
    largest = max((r for r in rows if r[1] >= 2**20), key=lambda r: r[2] / r[1])
    print(f"\nsize after the load: tables {tables / 2**20:.1f} MB, indexes {indexes / 2**20:.1f} "
          f"MB ({indexes / max(tables, 1):.2f}x); of tables over 1 MB, {largest[0]}'s indexes "
          f"are the largest share, {largest[2] / largest[1]:.2f}x it (goal: no table's over 2x)")
    for name, table, index in rows[:8]:
        print(f"  {name:16}{table / 2**20:9.1f} MB table{index / 2**20:9.1f} MB indexes"
              f"{index / max(table, 1):7.2f}")
    print("  source's indexes: " + ", ".join(
        f"{name} {size / 2**20:.1f}" for name, size in index_sizes(url, "source")))
    autovacuum, written = updates(url)
    print(f"\nupdates (the server's autovacuum: {autovacuum}):")
    for name, updated, hot, dead, vacuums in written[:5]:
        print(f"  {name:16}{updated:10,.0f} updated, {hot / max(updated, 1):4.0%} HOT, "
              f"{dead:9,.0f} dead rows now, {vacuums} autovacuum runs")


if __name__ == "__main__":
    main()
