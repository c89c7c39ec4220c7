"""The floor of a request on Postgres: bare gunicorn against rua's routes on a provider's store,
with where each request's time goes (prints figures; asserts nothing).

    .venv/bin/python bench/api_postgres.py --database-url postgresql://USER@HOST/DB
        [--against PATH] [--rounds 3] [--seconds 5] [--connections 16]

The database is one bench/ingest_provider.py filled (200 organizations x 25 domains), left as it
is but for 10 keys per organization made here (bench/sources.py's provider_keys). Each target is
served by gunicorn under deploy/gunicorn.conf.py and loaded by wrk in interleaved rounds
(bench/interleave.py's way: every server up at once, the order shuffled each round): the bare
WSGI app (bench/api_apps.py, the ceiling), the metered floor (bench/api_apps.py's metered_app: a
Flask route that authenticates the key and meters the request exactly as rua does, against the
same Postgres, then answers the same constant body: the least any route costs while quotas are
exact across hosts), /dashboard/overview (a snapshot), /reports?limit=50 and /sources. With
--against PATH, another checkout (e.g. a worktree of main) serves the same routes in the same
rounds. Beside req/s and latency, and their ratios to the ceiling's and the floor's of the same
round, per request: the gunicorn workers' CPU, the CPU of the Postgres backends serving them
(/proc, the backends found by their application_name) and wrk's own, and the statements each
request sends (counted in process, one request at a time, through the driver's cursor: the
pool's own checks included). Then what the machine's CPUs allow the floor at most.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import pathlib
import random
import resource
import statistics
import subprocess
import sys
from collections import Counter
from datetime import timedelta

ROOT = pathlib.Path(__file__).resolve().parents[1]
# --count runs with RUA_BENCH_CODE naming the checkout whose app it counts: that one comes first.
sys.path[:0] = [path for path in (os.environ.get("RUA_BENCH_CODE"), str(ROOT)) if path]

ROUTES = {
    "/dashboard/overview": "/api/v1/dashboard/overview",
    "/reports?limit=50": "/api/v1/reports?limit=50",
    "/sources": "/api/v1/sources",
}
CEILING = "bare WSGI (ceiling)"
FLOOR = "metered floor"
APPS = {"wsgi": "wsgi:app", "floor": "bench.api_apps:metered_app()"}
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids) -> float:
    """User + system CPU of the processes (those gone meanwhile count nothing)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICKS


def workers_of(master: int) -> list[int]:
    """The gunicorn master's worker processes."""
    found = []
    for task in os.listdir(f"/proc/{master}/task"):
        with open(f"/proc/{master}/task/{task}/children") as children:
            found += [int(pid) for pid in children.read().split()]
    return found


def backends(url: str, name: str) -> list[int]:
    """The pids of the Postgres backends whose application_name is name."""
    import psycopg2
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", (name,))
        pids = [row[0] for row in cursor.fetchall()]
    connection.close()
    return pids


def with_name(url: str, name: str) -> str:
    return url + ("&" if "?" in url else "?") + f"application_name={name}"


def run_measured(wrk, server, target, keys, seconds, connections, url) -> dict:
    """One wrk run of the target, with the CPU its workers, their backends and wrk itself (the
    one child this process waits for meanwhile) spent a request."""
    from bench.api import run_wrk
    workers = workers_of(server.process.pid)
    pg = backends(url, target.app_name) if target.app_name else []
    before = cpu_seconds(workers), cpu_seconds(pg), waited_cpu_seconds()
    figures = run_wrk(wrk, server.url, target.paths, keys, seconds, connections, 2)
    after = cpu_seconds(workers), cpu_seconds(pg), waited_cpu_seconds()
    for name, spent, done in zip(("worker_ms", "pg_ms", "wrk_ms"), before, after):
        figures[name] = 1000 * (done - spent) / figures["requests"]
    return figures


def waited_cpu_seconds() -> float:
    """User + system CPU of the children this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def count_statements(url: str, path: str, key: str, app_name: str = "wsgi",
                     requests: int = 50) -> dict:
    """The statements one request of path sends to the app of APPS named app_name, by kind,
    averaged over requests (after one unmeasured request), counted at the driver's cursor."""
    import psycopg2.extensions

    from config import Config
    from store import db
    from store.clock import utcnow
    from bench.api_apps import metered_app
    from webapp import create_app

    sent: list[str] = []

    class Counting(psycopg2.extensions.cursor):
        def execute(self, query, vars=None):
            sent.append(query.decode() if isinstance(query, bytes) else query)
            return super().execute(query, vars)

    # One second a request: the abuse window (50 requests in 10 s per key) never closes.
    ticks, first = itertools.count(), utcnow()
    make = create_app if app_name == "wsgi" else metered_app
    app = make(Config(database_url=url, offline=True),
               clock=lambda: first + timedelta(seconds=next(ticks)))
    db.obj.connect_params["cursor_factory"] = Counting
    db.obj.close_all()
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    assert client.get(path, headers=headers).status_code == 200
    sent.clear()
    for _ in range(requests):
        client.get(path, headers=headers)
    kinds = Counter(" ".join(text.split())[:40] for text in sent)
    return {"statements": len(sent) / requests,
            "kinds": {kind: n / requests for kind, n in kinds.most_common()}}


def print_statements(url: str, keys: list[str], roots: dict) -> None:
    """Each count with a key of its own: its clock runs ahead of the abuse window's."""
    print("\nstatements a request (in process, one at a time, 50 requests after one):")
    unused = iter(keys)
    counted = [("this", ROOT, FLOOR, "/constant", "floor")]
    counted += [(label, root, route, path, "wsgi") for label, root in roots.items()
                for route, path in ROUTES.items()]
    for label, root, route, path, app_name in counted:
        key = next(unused)
        env = {**os.environ, "RUA_BENCH_CODE": str(root)}
        out = subprocess.run([sys.executable, __file__, "--count", path, "--database-url",
                              url, "--key", key, "--app", app_name], env=env, cwd=root,
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"  {label} {route}: failed: {out.stderr[-500:]}")
            continue
        found = json.loads(out.stdout.splitlines()[-1])
        kinds = ", ".join(f"{n:g} {kind}" for kind, n in found["kinds"].items())
        print(f"  {label:<6} {route:<22} {found['statements']:.1f}: {kinds}")


class Target:
    def __init__(self, label, app_spec, paths, root, app_name):
        self.label, self.app_spec, self.paths = label, app_spec, paths
        self.root, self.app_name, self.runs = root, app_name, []

    def median(self, figure: str) -> float:
        return statistics.median(run[figure] for run in self.runs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True,
                        help="the store bench/ingest_provider.py filled (keys are added to it)")
    parser.add_argument("--against", default="", help="another checkout to serve the routes")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds over every target (default %(default)s)")
    parser.add_argument("--seconds", type=int, default=5,
                        help="wrk's run per target and round (default %(default)s)")
    parser.add_argument("--connections", type=int, default=16,
                        help="wrk's connections (default %(default)s)")
    parser.add_argument("--count", default="", help=argparse.SUPPRESS)
    parser.add_argument("--key", default="", help=argparse.SUPPRESS)
    parser.add_argument("--app", default="wsgi", choices=APPS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count:
        print(json.dumps(count_statements(args.database_url, args.count, args.key, args.app)))
        return

    from bench.api import OUT, ensure_wrk
    from bench.sources import provider_keys
    OUT.mkdir(parents=True, exist_ok=True)
    wrk, keys = ensure_wrk(), provider_keys(args.database_url)
    roots = {"this": ROOT}
    if args.against:
        roots["other"] = pathlib.Path(args.against).resolve()
    targets = [Target(CEILING, "bench.api_apps:bare", ["/constant"], ROOT, ""),
               Target(FLOOR, APPS["floor"], ["/constant"], ROOT, "rua-bench-floor")]
    for label, root in roots.items():
        for route, path in ROUTES.items():
            targets.append(Target(f"{label} {route}", APPS["wsgi"], [path], root,
                                  f"rua-bench-{label}"))
    print(f"{len(keys):,} keys; wrk -t2 -c{args.connections} -d{args.seconds}s, {args.rounds} "
          f"interleaved rounds; gunicorn (deploy/gunicorn.conf.py); load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    with_servers(args, wrk, keys, targets)
    ceiling = next(t for t in targets if t.label == CEILING)
    floor = next(t for t in targets if t.label == FLOOR)
    print(f"\n{'target':<32} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'bad':>5} "
          f"{'x bare':>7} {'x floor':>7} {'worker ms':>9} {'pg ms':>6} {'wrk ms':>6}  (medians of "
          "the rounds; x: the ratio of req/s in the same round; ms: CPU a request)")
    for t in targets:
        bad = sum(run["non2xx"] + run["errors"] for run in t.runs)
        print(f"{t.label:<32} {t.median('rps'):>7,.0f} {t.median('p50_us') / 1000:>7.2f} "
              f"{t.median('p99_us') / 1000:>7.2f} {bad:>5} {ratio(t, ceiling):>7.3f} "
              f"{ratio(t, floor):>7.3f} {t.median('worker_ms'):>9.2f} "
              f"{t.median('pg_ms'):>6.2f} {t.median('wrk_ms'):>6.2f}")
    spent = floor.median("worker_ms") + floor.median("pg_ms")
    print(f"the metered floor's CPU a request, workers and Postgres: {spent:.2f} ms, so "
          f"{os.cpu_count()} CPUs serve it at most {os.cpu_count() * 1000 / spent:,.0f} req/s "
          f"(with wrk's {floor.median('wrk_ms'):.2f} ms: "
          f"{os.cpu_count() * 1000 / (spent + floor.median('wrk_ms')):,.0f})")
    load = os.getloadavg()
    print(f"load average after the run: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    print_statements(args.database_url, keys[::-1], roots)


def ratio(target: Target, baseline: Target) -> float:
    """The median over the rounds of target's req/s over baseline's in the same round."""
    return statistics.median(r["rps"] / b["rps"] for r, b in zip(target.runs, baseline.runs))


def with_servers(args, wrk, keys, targets) -> None:
    """Start one gunicorn per target, warm each up, then the interleaved rounds."""
    import contextlib

    from bench.api import Gunicorn, check_answers, run_wrk
    with contextlib.ExitStack() as stack:
        servers = []
        for t in targets:
            url = with_name(args.database_url, t.app_name) if t.app_name else args.database_url
            servers.append(stack.enter_context(Gunicorn(t.app_spec, url, root=t.root)))
        for t, server in zip(targets, servers):
            check_answers(server.url, t.paths, keys[0])
            run_wrk(wrk, server.url, t.paths, keys, 4, args.connections, 2)
        for number in range(args.rounds):
            order = list(zip(targets, servers))
            random.shuffle(order)
            for t, server in order:
                t.runs.append(run_measured(wrk, server, t, keys, args.seconds,
                                           args.connections, args.database_url))
            print(f"  round {number + 1} of {args.rounds}: "
                  + ", ".join(f"{t.label} {t.runs[-1]['rps']:,.0f}" for t in targets),
                  flush=True)


if __name__ == "__main__":
    main()
