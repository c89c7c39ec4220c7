"""What each of the API's speed mechanisms buys on its own routes, and this code against an older
commit's, in one interleaved run (prints figures; asserts nothing).

Every variant is the real app under deploy/gunicorn.conf.py with one mechanism taken out
(app() below); each route of a variant is a target whose ratio is taken against the same
route of the full app in the same round (bench/interleave.py). With --before COMMIT, that
commit's code (git archive into a temporary directory) serves the same routes on the same
store, and every route of both checkouts is also given as a ratio to the bare WSGI ceiling.
The store is bench/api.py's (cached under bench/out/), with its organization's snapshots
computed first; 2,000 keys of an unlimited plan, so every request is metered, none refused.

    .venv/bin/python bench/mechanisms.py [--reports 200000] [--rounds 6] [--seconds 3]
                                         [--before COMMIT] [--only NAME,...]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import api_store  # noqa: E402
from bench.api import BASE, ensure_store, ensure_wrk  # noqa: E402
from bench.interleave import Target, measure, ratios, report  # noqa: E402

FULL = "bench.mechanisms:app()"
CEILING = "bare WSGI, constant 2 KB (ceiling)"


def _without_caches():
    """Nothing is kept between requests: the store's version is never known (as on Postgres)."""
    from webapp import connections, snapshot_fast_path
    connections.data_version = lambda database: None
    snapshot_fast_path.data_version = lambda database: None


def _without_fast_path(app):
    """Flask answers every request; the request log around the fast path stays."""
    app.wsgi_app.app = app.wsgi_app.app.flask_wsgi


def _without_answer_cache():
    from webapp.answer_cache import AnswerCache
    AnswerCache.get = lambda self, key, version, compute: compute()


def _without_metering():
    """Not a mechanism but the floor under the others: every request allowed with a constant
    tally (bench/metering_probes.py's constant_app), so the exact count's cost shows."""
    from bench.metering_probes import _allowed
    from store import usage
    usage.admit = lambda org_id, key_id, now, **_: _allowed()


# name: (what it switches off before the app is made, after, the routes it serves)
SWITCHES = {
    "fast_path": (None, _without_fast_path,
             ("overview", "health")),
    "caches": (_without_caches, None, ("overview", "health", "report")),
    "answer_cache": (_without_answer_cache, None, ("statistics", "reports")),
    "metering": (_without_metering, None, ("overview", "health", "report")),
}


def app(without: str = ""):
    """The real app with the named mechanisms (comma-separated SWITCHES) taken out."""
    from webapp import create_app
    names = [n for n in without.split(",") if n]
    for name in names:
        before, _after, _routes = SWITCHES[name]
        if before:
            before()
    application = create_app()
    for name in names:
        after = SWITCHES[name][1]
        if after:
            after(application)
    return application


def routes(ids: list[str]) -> dict[str, list[str]]:
    return {"overview": [f"{BASE}/dashboard/overview"],
            "health": [f"{BASE}/domains/{d}/health" for d in api_store.DOMAINS],
            "report": [f"{BASE}/reports/{i}" for i in ids],
            "statistics": [f"{BASE}/statistics"],
            "reports": [f"{BASE}/reports?limit=50"]}


def snapshots(path: pathlib.Path) -> None:
    """Compute the organization's snapshots, so no measured request computes one."""
    from snapshotter import jobs
    from store import open_db
    from store.clock import utcnow
    from store.models import Organization
    with open_db(f"sqlite:///{path}").connection_context():
        for org in Organization.select():
            jobs.refresh_org(org.id, utcnow())


def checkout(commit: str, into: str) -> pathlib.Path:
    """The commit's files (git archive), to serve beside this checkout's; a directory is taken
    as such a copy already made."""
    if pathlib.Path(commit).is_dir():
        return pathlib.Path(commit)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return pathlib.Path(into)


def plan(ids, only: list[str], before: pathlib.Path | None) -> list[Target]:
    paths = routes(ids)
    full = {r: Target(f"{r}: full", FULL, p) for r, p in paths.items()}
    targets = [Target(CEILING, "bench.api_apps:bare", ["/constant"])]
    wanted = sorted({r for name in only for r in SWITCHES[name][2]}, key=list(paths).index)
    targets += [full[r] for r in wanted]
    for name in only:
        targets += [Target(f"{r}: without {name}", f'bench.mechanisms:app("{name}")', paths[r],
                           full[r].label) for r in SWITCHES[name][2]]
    if before is not None:
        for r in ("overview", "health", "report"):
            if full[r] not in targets:
                targets.append(full[r])
            targets.append(Target(f"{r}: before", "wsgi:app", paths[r], full[r].label, root=before))
    return targets


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reports", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--before", help="a commit (or a copy of one) whose code serves the "
                                             "same routes")
    parser.add_argument("--only", default="fast_path,caches,answer_cache",
                        help=f"mechanisms to take out, one variant each: {','.join(SWITCHES)} "
                             "(metering: the floor, every request allowed uncounted)")
    args = parser.parse_args(argv)
    only = [n for n in args.only.split(",") if n]
    wrk, store = ensure_wrk(), ensure_store(args.reports)
    snapshots(store)
    ids, keys = api_store.sample_ids(str(store)), api_store.bench_keys()
    print(f"load before: {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        before = checkout(args.before, tmp) if args.before else None
        targets = plan(ids, only, before)
        measure(wrk, store, targets, keys, rounds=args.rounds, seconds=args.seconds,
                connections=args.connections, threads=2, env={"RUA_WORKERS": "4"})
    report(targets)
    print("(ratio: req/s over the baseline's in the same round, median of the rounds)")
    if before is not None or "metering" in only:
        print("\nagainst the ceiling:" if before is None else
              f"\nagainst the ceiling ({args.before} = before):")
        for t in targets:
            if t.label.endswith((": full", ": before", ": without metering")):
                r = ratios(Target(t.label, "", [], CEILING, runs=t.runs), targets)
                print(f"  {t.label:<24} {statistics.median(r):.3f} ({min(r):.2f}-{max(r):.2f})")
    print(f"load after: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
