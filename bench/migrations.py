"""How long today's `rua init` takes to upgrade a large store made at schema 9, and the longest
any other process waits on it meanwhile.

The store is made and filled by the release of commit a7691a0 (the last at schema 9), from its
own tree taken with git archive (as tests/store/test_upgrades.py does): its migrations, its
ingest, demo reports until it holds --filled records (bench/store_fill.py); then, up to
--records, copies of those reports and their records made in SQL (new ids and dedupe keys,
the same rows otherwise), since ingest on this shared machine takes ~40 minutes a million
records and a migration's cost depends on the rows, not on how they came. Then today's
`rua init` upgrades it, each migration timed from its start to the next one's (its commit
included), while a second process reads and writes the store in a loop (a read of the newest
report, then a one-row UPDATE, each timed; SQLite's busy timeout 60 s, so it waits instead of
failing): its longest wait is how long the upgrade held the API's writers (and readers) back.

Run: .venv/bin/python bench/migrations.py [--records 1000000] [--filled 100000]
     [--release a7691a0]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
FILL = ROOT / "bench" / "store_fill.py"
# Today's `rua init`, each migration's start noted (wall clock, comparable across processes).
TIMED_INIT = """
import json, sys, time
import store.migrations as m
starts = []
def timed(version, step):
    def run(database):
        starts.append((version, time.time()))
        step(database)
    return run
m.MIGRATIONS[:] = [(v, d, timed(v, s)) for v, d, s in m.MIGRATIONS]
from cli import main
began = time.time()
try:
    main(["init"], standalone_mode=False)
finally:
    print(json.dumps({"began": began, "starts": starts, "ended": time.time()}), file=sys.stderr)
"""


def release_tree(commit: str, folder: pathlib.Path) -> pathlib.Path:
    tree = folder / "release"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


# Schema 9's report and record columns. A copy's ids start with its number and its dedupe key
# with it (every ULID of this decade starts with "01"), and its report id ends with it, so
# copies never meet the originals, whatever a later release's duplicate key is made of.
COPY_REPORTS = """
INSERT INTO report (id, org_id, dedupe_key, version, org_name, email, extra_contact_info,
    report_id, date_begin, date_end, day_begin, day_end, errors, generator, domain, adkim, aspf,
    p, sp, np, pct, fo, testing, psd, discovery_method, total_messages, compliant_messages,
    compliance_rate, record_count, failure_summary, parse_warnings, received_at)
SELECT printf('%02d', ?) || substr(id, 3), org_id, printf('%02d', ?) || dedupe_key,
    version, org_name, email, extra_contact_info, report_id || '-copy' || printf('%02d', ?),
    date_begin, date_end, day_begin, day_end, errors, generator, domain, adkim, aspf, p, sp, np, pct, fo, testing, psd,
    discovery_method, total_messages, compliant_messages, compliance_rate, record_count,
    failure_summary, parse_warnings, received_at
FROM report WHERE substr(id, 1, 2) = '01'
"""
COPY_RECORDS = """
INSERT INTO record (report_id, org_id, ordinal, source_ip, count, disposition, dkim, spf,
    reasons, envelope_to, envelope_from, header_from, auth_dkim, auth_spf, alignment,
    classification)
SELECT printf('%02d', ?) || substr(report_id, 3), org_id, ordinal, source_ip, count,
    disposition, dkim, spf, reasons, envelope_to, envelope_from, header_from, auth_dkim,
    auth_spf, alignment, classification
FROM record WHERE substr(report_id, 1, 2) = '01'
"""


def copy_up_to(path: pathlib.Path, records: int) -> None:
    """Copy the filled reports and records until the store holds at least `records` records."""
    with sqlite3.connect(path) as con:
        filled = con.execute("SELECT count(*) FROM record").fetchone()[0]
        copies = -(-records // filled) - 1
        for number in range(2, 2 + copies):
            con.execute(COPY_REPORTS, (number, number, number))
            con.execute(COPY_RECORDS, (number,))
            con.commit()


def env_for(url: str, lock_dir: str, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=url, RUA_LOCK_DIR=lock_dir, RUA_OFFLINE="1", **extra)
    return env


def probe(path: str, stop, out) -> None:
    """Read and write the store in a loop until `stop`; send back every (start, read s, write s)."""
    con = sqlite3.connect(path, timeout=60, isolation_level=None)
    con.execute("PRAGMA journal_mode=wal")
    seen = []
    while not stop.is_set():
        began = time.time()
        con.execute("SELECT id FROM report ORDER BY id DESC LIMIT 1").fetchall()
        read = time.time()
        con.execute("UPDATE organization SET plan = plan WHERE name = 'Bench'")
        seen.append((began, read - began, time.time() - read))
        time.sleep(0.005)
    con.close()
    out.send(seen)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--filled", type=int, default=100_000,
                        help="records ingested by the release; the rest are copies")
    parser.add_argument("--release", default="a7691a0", help="a commit whose schema is 9")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rua-migrations-") as folder:
        folder_path = pathlib.Path(folder)
        tree = release_tree(args.release, folder_path)
        path = folder_path / "rua.db"
        url = f"sqlite:///{path}"
        started = time.perf_counter()
        filled = min(args.filled, args.records)
        done = subprocess.run([sys.executable, str(FILL), url, str(filled), folder],
                              cwd=tree, env=env_for(url, folder, PYTHONPATH=str(tree)),
                              capture_output=True, text=True, check=True)
        _, ingested, days = (int(n) for n in done.stdout.split())
        copy_up_to(path, args.records)
        with sqlite3.connect(path) as con:
            version = con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
            reports = con.execute("SELECT count(*) FROM report").fetchone()[0]
            records = con.execute("SELECT count(*) FROM record").fetchone()[0]
        print(f"store made by {args.release} at schema {version}: {reports:,} reports, "
              f"{records:,} records ({ingested:,} ingested over {days:,} days, the rest copied), "
              f"{path.stat().st_size / 2**20:.0f} MB, in {time.perf_counter() - started:.0f} s")

        stop = multiprocessing.Event()
        receive, send = multiprocessing.Pipe(duplex=False)
        prober = multiprocessing.Process(target=probe, args=(str(path), stop, send))
        prober.start()
        time.sleep(1.0)                 # the probe's own first statements are behind it
        init = subprocess.run([sys.executable, "-c", TIMED_INIT], cwd=ROOT,
                              env=env_for(url, folder), capture_output=True, text=True)
        time.sleep(1.0)
        stop.set()
        seen = receive.recv()
        prober.join()
        if init.returncode != 0:
            raise SystemExit(f"rua init failed: {init.stderr}")
        timing = json.loads(init.stderr.strip().splitlines()[-1])
        report(init.stdout, timing, seen)


def report(output: str, timing: dict, seen: list) -> None:
    print(output.strip())
    bounds = [*timing["starts"], (None, timing["ended"])]
    print(f"\n{'migration':>9} {'seconds':>9} {'longest read wait':>18} {'longest write wait':>19}")
    for (version, start), (_, end) in zip(bounds, bounds[1:]):
        during = [s for s in seen if s[0] <= end and s[0] + s[1] + s[2] >= start]
        read = max((s[1] for s in during), default=0.0)
        write = max((s[2] for s in during), default=0.0)
        print(f"{version:>9} {end - start:9.3f} {read:18.3f} {write:19.3f}")
    print(f"\nrua init in all: {timing['ended'] - timing['began']:.2f} s (the last migration's "
          f"time includes the counters' file check); the probe made {len(seen):,} read+write "
          f"rounds, longest read wait {max(s[1] for s in seen):.3f} s, longest write wait "
          f"{max(s[2] for s in seen):.3f} s")


if __name__ == "__main__":
    main()
