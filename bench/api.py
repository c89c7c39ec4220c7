"""How fast rua's API serves, against two baselines measured in the same run (prints figures).

Every target runs under deploy/gunicorn.conf.py (same workers, same logging) and is loaded by
wrk with the same connections and duration:
  1. a bare WSGI app answering a constant 2 KB JSON body: the ceiling of this machine;
  2. a Flask route answering the same bytes: the framework's cost;
  3. rua's /reports/{id}, /reports?limit=50, /reports?domain=...&result=fail&sort_by=compliance
     and /statistics, with keys, on a SQLite store of --reports reports (bench/api_store.py says
     what is generated; the store is cached under bench/out/ so a rerun starts at once).
Requests rotate over the newest 1,000 report ids and over 2,000 keys of one organization on
the unlimited plan (every request is still metered: the abuse limit of 50 requests per key in
10 s stays out of the way). Prints requests/s, p50/p99 latency and each target's ratio to
the ceiling.

    .venv/bin/python bench/api.py [--reports N] [--duration S] [--connections C]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import api_store  # noqa: E402

OUT = ROOT / "bench" / "out"
CONF = ROOT / "deploy" / "gunicorn.conf.py"
BASE = "/api/v1"
BUSY_DOMAIN = api_store.DOMAINS[0]

LUA = r"""
local keys = {%(keys)s}
local paths = {%(paths)s}
local threads = 0
function setup(thread)
  thread:set("first", threads * 7919)
  threads = threads + 1
end
local n = 0
function request()
  n = n + 1
  local i = n + (first or 0)
  return wrk.format("GET", paths[i %% #paths + 1],
                    {["Authorization"] = "Bearer " .. keys[i %% #keys + 1]})
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%%d,"duration_us":%%d,"p50_us":%%d,"p99_us":%%d,"non2xx":%%d,"errors":%%d}\n',
    summary.requests, summary.duration, math.floor(latency:percentile(50)),
    math.floor(latency:percentile(99)), e.status, e.connect + e.read + e.write + e.timeout))
end
"""


def ensure_wrk() -> str:
    """wrk from Debian's packages, installed on first use."""
    found = shutil.which("wrk")
    if found:
        return found
    print("installing wrk (apt-get install wrk) ...", flush=True)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return shutil.which("wrk") or sys.exit("bench/api.py: wrk could not be installed")


def ensure_store(reports: int) -> pathlib.Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"api-{reports}-{api_store.schema_tag()}.db"
    if path.exists():
        print(f"store: {path.relative_to(ROOT)} (cached)", flush=True)
    else:
        started = time.perf_counter()
        api_store.build(str(path), reports, progress=lambda line: print(line, flush=True))
        print(f"store: {path.relative_to(ROOT)} built in {time.perf_counter() - started:.1f} s",
              flush=True)
    # A store cached by an older checkout gets this one's schema; the counters' file, named
    # after the store, is made here.
    _migrate(path)
    return path


def _migrate(path: pathlib.Path) -> None:
    from store import open_db
    from store.migrations import migrate
    database = open_db(f"sqlite:///{path}")
    with database.connection_context():
        for version, description in migrate(database):
            print(f"store: applied migration {version}: {description}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Gunicorn:
    """One gunicorn under deploy/gunicorn.conf.py serving app_spec, for the length of a with."""

    def __init__(self, app_spec: str, store: pathlib.Path | str, env: dict | None = None,
                 root: pathlib.Path = ROOT):
        """store: a SQLite file, or a database URL; env: more RUA_* settings; root: the
        checkout whose code is served (another commit's, to compare with this one)."""
        self.app_spec, self.env, self.root = app_spec, env or {}, root
        self.url_of_store = store if "://" in str(store) else f"sqlite:///{store}"
        self.port = free_port()

    def __enter__(self):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("RUA_") or k == "RUA_WORKERS"}
        env.update(RUA_DATABASE_URL=self.url_of_store, RUA_OFFLINE="1",
                   RUA_BIND=f"127.0.0.1:{self.port}", RUA_LOCK_DIR=str(OUT), **self.env)
        if self.root != ROOT:
            env["PYTHONPATH"] = str(self.root)
        self.log = tempfile.TemporaryFile()
        # The access log (stdout) is kept on, as deployed; it goes nowhere here. The bench's own
        # app variants are named as modules of the bench package (bench.api_apps:bare), so
        # bench/ never goes on the path, where its ingest.py would shadow rua's ingest package.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(CONF), self.app_spec],
            cwd=self.root, env=env,
            stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                sys.exit(f"gunicorn for {self.app_spec} exited:\n{self.log.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.1)
        sys.exit(f"gunicorn for {self.app_spec} did not start")

    def __exit__(self, *exc):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def check_answers(url: str, paths: list[str], key: str) -> None:
    """Measure only what works: the first path must answer 200 (else the body is printed)."""
    import urllib.error
    import urllib.request
    request = urllib.request.Request(url + paths[0], headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
    except urllib.error.HTTPError as error:
        sys.exit(f"{paths[0]} answered {error.code}: {error.read()[:300]!r}")


def run_wrk(wrk: str, url: str, paths: list[str], keys: list[str], duration: int,
            connections: int, threads: int) -> dict:
    quoted = lambda items: ",".join(json.dumps(i) for i in items)  # noqa: E731
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % {"keys": quoted(keys), "paths": quoted(paths)})
    try:
        result = subprocess.run(
            [wrk, f"-t{threads}", f"-c{connections}", f"-d{max(1, round(duration))}s",
             "--timeout", "10s", "-s", script.name, url], capture_output=True, text=True)
    finally:
        os.unlink(script.name)
    if result.returncode != 0:
        sys.exit(f"wrk failed ({result.returncode}): {result.stderr or result.stdout}")
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULT "))
    figures = json.loads(line[len("RESULT "):])
    figures["rps"] = figures["requests"] / (figures["duration_us"] / 1e6)
    return figures


def where_time_goes(store: pathlib.Path, paths: list[str], key: str) -> None:
    """One request at a time, in process: each endpoint's slowest SQL statements and the rest."""
    import logging
    from config import Config
    from webapp import create_app

    marks: list[tuple[float, str]] = []

    class Clock(logging.Handler):
        def emit(self, record):     # peewee logs a statement just before running it
            marks.append((time.perf_counter(), " ".join(str(record.msg[0]).split())))

    logger = logging.getLogger("peewee")
    logger.addHandler(Clock())
    logger.setLevel(logging.DEBUG)
    client = create_app(Config(database_url=f"sqlite:///{store}", offline=True)).test_client()
    print("\none request at a time, in process: the first (cold caches) and second request, and"
          " the second's slowest statements")
    for path in paths:
        took = []
        for _ in range(2):
            marks.clear()
            started = time.perf_counter()
            client.get(path, headers={"Authorization": f"Bearer {key}"})
            ended = time.perf_counter()
            took.append(ended - started)
        spans = [(b[0] - a[0], a[1]) for a, b in zip(marks, marks[1:] + [(ended, "")])]
        sql = sum(s for s, _ in spans[:-1])
        print(f"  {path[:70]}: first {1000 * took[0]:.1f} ms, then {1000 * took[1]:.1f} ms: "
              f"{len(marks)} statements ({1000 * sql:.1f} ms from their start to the next)")
        for span, text in sorted(spans, reverse=True)[:2]:
            print(f"      {1000 * span:8.1f} ms  {text[:110]}")


def targets(ids: list[str]):
    """(label, gunicorn app, paths) in the order printed; the first is the ceiling. Each target
    gets a fresh gunicorn, so requests a slow target left queued never count against the next."""
    rua = [
        ("/reports/{id}", [f"{BASE}/reports/{i}" for i in ids]),
        ("/reports?limit=50", [f"{BASE}/reports?limit=50"]),
        (f"/reports?domain={BUSY_DOMAIN}&result=fail&sort_by=compliance",
         [f"{BASE}/reports?domain={BUSY_DOMAIN}&result=fail&sort_by=compliance"]),
        ("/statistics", [f"{BASE}/statistics"]),
    ]
    return ([("bare WSGI, constant 2 KB (ceiling)", "bench.api_apps:bare", ["/constant"]),
             ("Flask route, same constant", "bench.api_apps:flask_app()", ["/constant"])]
            + [(label, "wsgi:app", paths) for label, paths in rua])


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reports", type=int, default=1_000_000, help="reports in the store")
    parser.add_argument("--duration", type=int, default=10, help="seconds per target")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of unmeasured load first")
    args = parser.parse_args(argv)

    wrk = ensure_wrk()
    store = ensure_store(args.reports)
    ids = api_store.sample_ids(str(store))
    keys = api_store.bench_keys()
    cpus = len(os.sched_getaffinity(0))
    workers = os.environ.get("RUA_WORKERS") or f"2 x {cpus} CPUs + 1"
    print(f"gunicorn: {CONF.relative_to(ROOT)}, workers {workers}; wrk -t{args.threads} "
          f"-c{args.connections} -d{args.duration}s on the same {cpus} CPUs", flush=True)

    rows = []
    plan = targets(ids)
    # The ceiling runs first and again last: on a shared machine the mean of the two is the
    # fairer baseline, and their difference shows how much the machine moved during the run.
    plan.append(("bare WSGI, again (ceiling)", *plan[0][1:]))
    for label, app_spec, paths in plan:
        with Gunicorn(app_spec, store) as server:
            check_answers(server.url, paths, keys[0])
            if args.warmup > 0:
                run_wrk(wrk, server.url, paths, keys, args.warmup, args.connections, args.threads)
            figures = run_wrk(wrk, server.url, paths, keys, args.duration, args.connections,
                              args.threads)
        rows.append((label, figures))
        print(f"  measured {label}: {figures['rps']:,.0f} req/s", flush=True)

    ceiling = (rows[0][1]["rps"] + rows[-1][1]["rps"]) / 2
    print()
    print(f"{'target':<62} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8} "
          f"{'x ceiling':>9}")
    for label, f in rows:
        print(f"{label:<62} {f['rps']:>9,.0f} {f['p50_us'] / 1000:>8.2f} "
              f"{f['p99_us'] / 1000:>8.2f} "
              f"{f['non2xx'] + f['errors']:>8} {f['rps'] / ceiling:>9.3f}")
    print("(ratios are to the mean of the two ceiling runs)")
    print(f"\nstore: {args.reports:,} reports in SQLite ({store.stat().st_size / 2**20:,.0f} MiB)")
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min) "
          f"on {cpus} CPUs")
    where_time_goes(store, [paths[0] for _, _, paths in targets(ids)[2:]], keys[-1])


if __name__ == "__main__":
    main()
