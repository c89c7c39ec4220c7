"""What metering costs: throughput with the quota step on against the bare ceiling, in one run.

Run from the repository root with the project's interpreter (needs `wrk`: apt-get install wrk):

    .venv/bin/python bench/metering.py [--seconds 3] [--rounds 6] [--postgres URL] [--no-postgres]
                                       [--floor]

For SQLite (a temporary file) and Postgres (default postgresql://postgres@127.0.0.1:5432/
rua_bench_metering, created if missing, its tables dropped and recreated), the same gunicorn
(deploy/gunicorn.conf.py, 4 workers) serves each endpoint twice: "bare" is this module's
bare_app(), the real app with the metering step taken out, and "metered" is the real app. All four
servers of a store run at once and are loaded in interleaved rounds (bench/interleave.py): the
cost is 1 - metered/bare of the same round, and the median over the rounds is printed. wrk
spreads requests over many keys of many team-plan organizations and the counters are emptied
between rounds, so neither the abuse control nor a spent quota refuses any of them: every
measured request is allowed and pays the full conditional increment. It also times
store.usage.admit() in-process (microseconds per metered request). With --floor, SQLite's
rounds also load the probes of bench/metering_probes.py against the same bare target: what no
count, one plain one-row write, and one round trip to a local process cost, the least any
design pays. It prints figures; it asserts nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# 1,200 keys: under 50 a key in any 10 s up to 6,000 req/s, so two metered targets loaded one
# after the other within the abuse window stay under it too.
ORGS, KEYS_PER_ORG = 20, 60
POSTGRES = "postgresql://postgres@127.0.0.1:5432/rua_bench_metering"


def metering(on: bool) -> None:
    """Put the metering step into the app (on) or take it out (the baseline it is measured
    against)."""
    from webapp import quota
    real = _REAL.setdefault("gate", quota.gate)
    quota.gate = real if on else (lambda *args, **kwargs: None)


_REAL: dict = {}


def bare_app():
    """The real app with the metering step taken out: the ceiling metering is measured against."""
    from webapp import create_app
    metering(on=False)
    return create_app()


def prepare(url: str) -> list[str]:
    """A fresh store of team-plan organizations, their keys (plaintexts returned), snapshots."""
    import store
    from store import keys
    from store.migrations import migrate
    from store.clock import utcnow
    from store.models import MODELS, ApiKey, Member, Organization, SchemaVersion
    database = store.open_db(url)
    with database.connection_context():
        database.drop_tables(MODELS + [SchemaVersion], safe=True, cascade=store.is_postgres())
        migrate(database)
        plaintexts, rows = [], []
        for n in range(ORGS):
            org = Organization.create(name=f"bench-{n}", plan="team")
            member = Member.create(org=org, email=f"owner{n}@example.com", role="owner")
            for _ in range(KEYS_PER_ORG):
                plaintext = keys.new_key()
                plaintexts.append(plaintext)
                # Used just now: the once-a-minute last_used_at write of auth stays out of the run.
                rows.append({"org": org, "member": member, "digest": keys.digest(plaintext),
                             "prefix": keys.display_prefix(plaintext),
                             "last_used_at": utcnow() + timedelta(minutes=30)})
        ApiKey.insert_many(rows).execute()
        _snapshots([o.id for o in Organization.select()])
    if hasattr(database, "close_all"):
        database.close_all()
    return plaintexts


def _snapshots(org_ids: list[str]) -> None:
    from store.clock import utcnow
    try:
        from snapshotter.jobs import refresh_org
    except ImportError:
        return
    for org_id in org_ids:
        refresh_org(org_id, utcnow())


# The real app with the metering step taken out, served as gunicorn serves each target.
BARE = "bench.metering:bare_app()"
# --floor: the probes of bench/metering_probes.py, each measured against the same bare target.
PROBES = (("no count (constant tally)", "bench.metering_probes:constant_app()"),
          ("one-row write, SQLite", "bench.metering_probes:write_app()"),
          ("round trip to a local process", "bench.metering_probes:round_trip_app()"),
          ("shared memory under a lock file", "bench.metering_probes:shared_memory_app()"))


def measure(url: str, label: str, seconds: int, rounds: int, floor: bool = False) -> list[tuple]:
    """(store, path, what, bare figures, figures, ratios) of each endpoint and target,
    interleaved; with floor, the probes too."""
    from bench.api import ensure_wrk
    from bench.interleave import Target, measure as interleaved, ratios
    from bench.metering_probes import SOCKET_ENV
    plaintexts = prepare(url)
    targets, measured = [], []
    for path in _endpoints(url):
        bare = Target(f"{label} {path} bare", BARE, [path])
        targets.append(bare)
        for what, spec in (("exact metering", "wsgi:app"),) + (PROBES if floor else ()):
            target = Target(f"{label} {path} {what}", spec, [path], bare.label)
            targets.append(target)
            measured.append((label, path, what, bare, target))
    print(f"{label}: {rounds} rounds of {seconds} s a target", flush=True)
    with tempfile.TemporaryDirectory() as tmp, _answering(f"{tmp}/probe.sock", floor) as answering:
        # Counters are emptied after each round, so no quota ever refuses a measured request.
        interleaved(ensure_wrk(), url, targets, plaintexts, rounds=rounds, seconds=seconds,
                    connections=16, threads=2, env={"RUA_WORKERS": "4", SOCKET_ENV: answering},
                    between=lambda _round: _reset_counters(url))
    return [(*row, ratios(row[-1], targets)) for row in measured]


@contextlib.contextmanager
def _answering(path: str, wanted: bool):
    """The process the round-trip probe asks, for the length of the with (when wanted)."""
    if not wanted:
        yield ""
        return
    process = subprocess.Popen([sys.executable, str(ROOT / "bench" / "metering_probes.py"), path])
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit("the round-trip probe's answering process did not start")
            time.sleep(0.05)
        yield path
    finally:
        process.kill()
        process.wait()


def _reset_counters(url: str) -> None:
    import store
    from store.models import Usage
    database = store.open_db(url)
    with database.connection_context(), store.meter.connection_context():
        Usage.delete().execute()
    if hasattr(database, "close_all"):
        database.close_all()


def _endpoints(url: str) -> list[str]:
    from config import Config
    from webapp import create_app
    app = create_app(Config(database_url=url, offline=True))
    rules = {r.rule for r in app.url_map.iter_rules()}
    return [p for p in ("/api/v1/enums", "/api/v1/dashboard/overview") if p in rules]


def request_cost(url: str, count: int = 2000) -> dict[str, float]:
    """Microseconds per GET /enums in-process (Flask test client), bare and metered, best of 3.

    One process, no scheduling between workers: the CPU each variant costs. The app's clock
    steps one second per 200 requests, so 100 keys stay under the abuse limit.
    """
    from config import Config
    from store.clock import utcnow
    from webapp import create_app
    keys = prepare(url)[:100]
    ticks, start = itertools.count(), utcnow()
    clock = lambda: start + timedelta(seconds=next(ticks) // 200)   # noqa: E731
    best = {}
    for _ in range(3):
        for variant in ("bare", "metered"):
            metering(on=variant == "metered")
            client = create_app(Config(database_url=url, offline=True), clock=clock).test_client()
            began = time.perf_counter()
            for i in range(count):
                client.get("/api/v1/enums", headers={"Authorization": f"Bearer {keys[i % 100]}"})
            micros = (time.perf_counter() - began) / count * 1e6
            best[variant] = min(best.get(variant, micros), micros)
    metering(on=True)
    return best


def admit_cost(url: str, count: int = 2000) -> float:
    """Microseconds per store.usage.admit() call, in-process, one connection, keys in turn."""
    import store
    from store import usage
    from store.models import ApiKey
    database = store.open_db(url)
    with database.connection_context():
        rows = list(ApiKey.select())
        now = int(time.time())
        start = time.perf_counter()
        for i in range(count):
            key = rows[i % len(rows)]
            usage.admit(key.org_id, key.id, now + i // 500, limit=10**9, heavy_limit=None)
        elapsed = time.perf_counter() - start
    if hasattr(database, "close_all"):
        database.close_all()
    return elapsed / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=3, help="seconds a target and round")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds")
    parser.add_argument("--postgres", default=POSTGRES)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--floor", action="store_true",
                        help="on SQLite, also the probes of bench/metering_probes.py: what any "
                             "design costs at the least (no count, one plain write, a round trip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        backends = [("sqlite", f"sqlite:///{tmp}/bench.db")]
        if not args.no_postgres:
            _ensure_database(args.postgres)
            backends.append(("postgres", args.postgres))
        rows, costs, requests = [], {}, {}
        for label, url in backends:
            rows += measure(url, label, args.seconds, args.rounds, args.floor and label == "sqlite")
            costs[label] = admit_cost(url)
            requests[label] = request_cost(url)
    print(f"\n{'store':9} {'endpoint':28} {'metering':31} {'bare req/s':>10} {'req/s':>6} "
          f"{'ratio':>6} {'cost':>5}  (medians of the rounds; cost lowest-highest)")
    for label, path, what, bare, target, ratio in rows:
        bad = sum(r["non2xx"] + r["errors"] for r in bare.runs + target.runs)
        note = f"  ({bad} non-2xx!)" if bad else ""
        middle = statistics.median(ratio)
        spread = f"({1 - max(ratio):.0%}-{1 - min(ratio):.0%})"
        print(f"{label:9} {path:28} {what:31} {bare.median('rps'):10.0f} "
              f"{target.median('rps'):6.0f} {middle:6.2f} {1 - middle:5.0%}  {spread}{note}")
    for label, micros in costs.items():
        bare, metered = requests[label]["bare"], requests[label]["metered"]
        print(f"{label}: store.usage.admit {micros:.0f} µs; "
              f"GET /enums in-process {bare:.0f} µs bare, "
              f"{metered:.0f} µs metered ({1 - bare / metered:.0%} of the metered request)")


def _ensure_database(url: str) -> None:
    base, name = url.split("?")[0].rsplit("/", 1)
    listed = subprocess.run(["psql", base + "/postgres", "-tAc", "SELECT datname FROM pg_database"],
                            capture_output=True, text=True, check=True).stdout.split()
    if name not in listed:
        subprocess.run(["psql", base + "/postgres", "-c", f'CREATE DATABASE "{name}"'], check=True)


if __name__ == "__main__":
    main()
