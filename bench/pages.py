"""The dashboard's pages on a big store: the server's own time per page view, p50 and p95.

The store is filled through the real ingest path (bench/store_fill.py, demo reports until it
holds --records records; default 1,000,000; a --database-url already filled is used as it
is), its snapshots refreshed as the scheduler would,
then a signed-in Flask test client (no network, no gunicorn) views each page in interleaved
rounds, every page once a round in a shuffled order. Printed, not asserted: each page's server
time (wall clock) p50 and p95, and the same for this process's CPU time, which other work on a
shared machine does not inflate. Issue 35's goal is a p95 under 50 ms a page.

Run: .venv/bin/python bench/pages.py [--records 1000000] [--rounds 30] [--database-url URL]
"""
from __future__ import annotations

import argparse
import itertools
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import Config  # noqa: E402
from store import open_db  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.clock import utcnow  # noqa: E402

PAGES = ("/", "/domains/example.com", "/domains/example.com/dns?record=spf", "/reports",
         "/reports?sort_by=total_messages&sort_dir=asc&offset=500", "/reports/{report}",
         "/sources", "/sources?domain=example.com&has_failures=true", "/sources/{source}",
         "/tls-reports", "/events", "/usage")


def filled(url: str, records: int, lock_dir: str) -> None:
    started = time.perf_counter()
    line = subprocess.run([sys.executable, str(ROOT / "bench" / "store_fill.py"), url,
                           str(records), lock_dir], check=True, capture_output=True,
                          text=True, cwd=ROOT).stdout.split()
    print(f"store: {line[0]} reports, {line[1]} records over {line[2]} days "
          f"(filled in {time.perf_counter() - started:.0f} s)")


def has_bench(url: str) -> bool:
    from peewee import DatabaseError

    from store.models import Organization
    with open_db(url).connection_context():
        try:
            return Organization.select().where(Organization.name == "Bench").exists()
        except DatabaseError:
            return False


def signed_in(config):
    """A test client signed in with a new owner key of the bench organization. Its clock moves
    a second a request (as bench/sources.py's), so one key's burst limit is never met."""
    from snapshotter import jobs
    from store.models import Organization
    from store.ids import new_ulid
    from tests.factories import make_key, make_member
    from tests.webapp.pages.conftest import sign_in
    from webapp import create_app
    org = Organization.get(Organization.name == "Bench")
    jobs.refresh_org(org.id, utcnow())
    key = make_key(org, member=make_member(org, email=f"bench-{new_ulid()}@example.com"))[1]
    ticks = itertools.count()
    first = utcnow()
    client = create_app(config, clock=lambda: first + timedelta(seconds=next(ticks))).test_client()
    assert sign_in(client, key).status_code == 303
    return client


def timed(client, paths: list[str], rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per path, the milliseconds of each view: server time (wall clock) and this process's
    CPU time, which other work on a shared machine does not inflate."""
    spent = {path: ([], []) for path in paths}
    for _ in range(rounds):
        for path in random.sample(paths, len(paths)):
            started, cpu = time.perf_counter(), time.process_time()
            response = client.get(path)
            spent[path][0].append((time.perf_counter() - started) * 1000)
            spent[path][1].append((time.process_time() - cpu) * 1000)
            assert response.status_code == 200, (path, response.status_code)
    return spent


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=30,
                        help="views of each page, at least 2 for a p95 (default 30)")
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2: a p95 needs two views of a page")
    with tempfile.TemporaryDirectory(prefix="rua-bench-pages-") as folder:
        url = args.database_url or f"sqlite:///{folder}/rua.db"
        if not args.database_url or not has_bench(url):
            filled(url, args.records, folder)
        config = Config(database_url=url, offline=True, lock_dir=folder)
        database = open_db(url)
        with database.connection_context():
            migrate(database)                            # a store filled by an earlier rua
            from store.models import Record, Report
            client = signed_in(config)
            report = Report.select(Report.id).order_by(Report.id.desc()).first().id
            source = Record.select(Record.source_ip).first().source_ip
            paths = [p.format(report=report, source=source) for p in PAGES]
            timed(client, paths, 1)                      # the first view of each fills caches
            spent = timed(client, paths, args.rounds)
    print(f"{'page':60} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50':>8} {'cpu p95':>8}")
    for path, (wall, cpu) in spent.items():
        print(f"{path:60} {statistics.median(wall):8.1f} {p95(wall):8.1f} "
              f"{statistics.median(cpu):8.1f} {p95(cpu):8.1f}")


if __name__ == "__main__":
    main()
