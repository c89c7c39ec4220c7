"""The snapshotter at a provider's size on Postgres: the dirty refresh of every organization
after a report each, and the hourly health refresh of every domain; prints figures, asserts
nothing.

    .venv/bin/python bench/snapshot_provider.py --database-url postgresql://USER@HOST/SCRATCH_DB
        [--orgs 1000] [--reporters 1] [--sample 100] [--processes 2]

The database is a scratch one, filled once as bench/ingest_provider.py fills it (organizations
of 25 domains, one day of demo/'s reports routed by domain; the first --reporters of each
domain's ~5), then kept while it holds --orgs organizations. Each round ingests one new report
per organization, which marks them all dirty, as a busy minute of a provider's mail does.
Printed, in one run: the baseline, --sample organizations refreshed one after another in this
process (`refresh_org`), projected to all; the dirty job as `rua scheduler` runs it
(jobs/table.py, under its lock) on every organization; the hourly health job on every domain.
Beside each: Postgres's active time (pg_stat_database). Goals (issue 38): the dirty refresh of
1,000 organizations under 60 s on 2 CPUs; the health of 25,000 domains well within its hour.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import re
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)        # bench/dns.py must not stand in for dnspython's `dns`

from bench.ingest_provider import (DAY, analyze, build_store, pg_stats,  # noqa: E402
                                   run_workers, write_reports)

NOW = dt.datetime.combine(DAY + dt.timedelta(days=1), dt.time(1, 0))   # the refreshes' clock


def organizations(count: int) -> list[tuple[str, list[str]]]:
    """(name, its 25 domains) as bench/ingest_provider.py names them."""
    from bench.ingest_provider import ORGS, domain_names
    return domain_names(count / ORGS)


def stored_orgs(url: str) -> int:
    from store import open_db
    from store.models import Organization
    database = open_db(url)
    try:
        with database.connection_context():
            return Organization.select().count()
    except Exception:          # an empty database: no tables yet
        return 0
    finally:
        database.close_all()


def fill(url: str, orgs, reporters: int, processes: int) -> None:
    """The organizations, their domains and one day of reports, then ANALYZE."""
    build_store(url, orgs)
    with tempfile.TemporaryDirectory(prefix="rua-bench-snapshots-") as folder:
        files = write_reports(pathlib.Path(folder), orgs, DAY, reporters)
        seconds, counts, _ = run_workers(url, files, processes)
    analyze(url)
    print(f"filled: {len(files):,} reports in {seconds:.0f} s {counts}")


def change_every_org(url: str, orgs, processes: int) -> None:
    """One new report (a report id never used) for one domain of each organization."""
    nonce = f"{time.time_ns():x}"
    firsts = [(name, domains[:1]) for name, domains in orgs]
    with tempfile.TemporaryDirectory(prefix="rua-bench-snapshots-") as folder:
        files = write_reports(pathlib.Path(folder), firsts, DAY, reporters=1)
        for path in map(pathlib.Path, files):
            text = path.read_text(encoding="utf-8")
            path.write_text(re.sub(r"<report_id>(.*?)</report_id>",
                                   rf"<report_id>\1.{nonce}</report_id>", text, count=1),
                            encoding="utf-8")
        _, counts, _ = run_workers(url, files, processes)
    if counts.get("stored", 0) != len(files):
        raise SystemExit(f"the change reports were not all stored: {counts}")


def config_for(url: str, lock_dir: str):
    from config import Config
    return Config(database_url=url, offline=True, lock_dir=lock_dir)


def dirty_ids(url: str) -> list[str]:
    from store import open_db
    from store.models import Organization
    database = open_db(url)
    with database.connection_context():
        ids = [i for (i,) in Organization.select(Organization.id)
               .where(Organization.dirty_since.is_null(False))
               .order_by(Organization.dirty_since).tuples()]
    database.close_all()
    return ids


def one_after_another(url: str, ids: list[str]) -> float:
    """Seconds to refresh the organizations in this process, one after another."""
    from snapshotter import jobs
    from store import open_db
    database = open_db(url)
    with database.connection_context():
        started = time.perf_counter()
        for org_id in ids:
            jobs.refresh_org(org_id, NOW)
        seconds = time.perf_counter() - started
    database.close_all()
    return seconds


def scheduled(url: str, name: str, lock_dir: str) -> float:
    """Seconds of one run of the job `name` as `rua scheduler` runs it (its lock taken)."""
    from jobs.scheduler import run_exclusive
    from jobs.table import job_table
    from store import open_db
    config = config_for(url, lock_dir)
    job = {n: run for n, run, _ in job_table(config)}[name]
    database = open_db(url)
    started = time.perf_counter()
    if not run_exclusive(name, job, config, clock=lambda: NOW):
        raise SystemExit(f"the {name} job's lock is held elsewhere")
    seconds = time.perf_counter() - started
    database.close_all()
    return seconds


def measured(url: str, label: str, count: int, unit: str, run) -> float:
    """Run run() -> seconds; print it with Postgres's active time, per `unit`."""
    before = pg_stats(url)
    seconds = run()
    time.sleep(1.0)                     # the statistics reach pg_stat_database
    active = (pg_stats(url)["active_time"] - before["active_time"]) / 1000
    print(f"  {label:52s}{seconds:8.1f} s {seconds * 1000 / count:8.1f} ms a {unit}; "
          f"Postgres active {active:.1f} s")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True,
                        help="a scratch Postgres database (filled when it holds other counts)")
    parser.add_argument("--orgs", type=int, default=1000, help="organizations (default 1000)")
    parser.add_argument("--reporters", type=int, default=1,
                        help="reporters a domain's day of the fill (default 1 of about 5)")
    parser.add_argument("--sample", type=int, default=100,
                        help="organizations of the one-after-another baseline (default 100)")
    parser.add_argument("--processes", type=int, default=2, help="ingest processes (default 2)")
    args = parser.parse_args()
    url = args.database_url
    orgs = organizations(args.orgs)
    domains = sum(len(d) for _, d in orgs)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{len(orgs):,} organizations, {domains:,} domains")
    if stored_orgs(url) != len(orgs):
        fill(url, orgs, args.reporters, args.processes)
    with tempfile.TemporaryDirectory(prefix="rua-bench-locks-") as lock_dir:
        scheduled(url, "dirty", lock_dir)            # what the fill left, not measured
        change_every_org(url, orgs, args.processes)
        sample = dirty_ids(url)[:args.sample]
        print("\nafter one new report in every organization:")
        seconds = measured(url, f"{len(sample)} one after another (the baseline)", len(sample),
                           "organization", lambda: one_after_another(url, sample))
        print(f"  {'projected to ' + format(len(orgs), ',') + ' one after another':52s}"
              f"{seconds * len(orgs) / len(sample):8.1f} s")
        scheduled(url, "dirty", lock_dir)            # the rest, not measured
        change_every_org(url, orgs, args.processes)
        dirty = len(dirty_ids(url))
        measured(url, f"the dirty job on {dirty:,} (goal < 60 s)", dirty, "organization",
                 lambda: scheduled(url, "dirty", lock_dir))
        print("\nthe hourly job, nothing changed since:")
        measured(url, f"health of {domains:,} domains (goal < 3,600 s)", domains, "domain",
                 lambda: scheduled(url, "health", lock_dir))


if __name__ == "__main__":
    main()
