"""Ingest speed: rua against parsedmarc on the same inputs, offline, in one run; prints figures.

Run from the repository root with the project's interpreter:

    .venv/bin/python bench/ingest.py [--corpus DIR] [--records 50000] [--repeat 1]

parsedmarc lives only in bench/.venv-parsedmarc (created here on first use with
`python3 -m venv` and pip). Every measurement runs in its own subprocess; the time is taken
inside it around the work (interpreter start and imports excluded) and the peak RSS is the
child's ru_maxrss from wait4.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
VENV = HERE / ".venv-parsedmarc"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "aggregate"

# Runs inside bench/.venv-parsedmarc: parse_report_file on each file, offline, bundled data only.
PARSEDMARC_WORKER = r"""
import json, logging, sys, time
logging.disable(logging.CRITICAL)
import parsedmarc
files = json.load(sys.stdin)
accepted = rejected = 0
start, cpu = time.perf_counter(), time.process_time()
for path in files:
    try:
        result = parsedmarc.parse_report_file(path, offline=True, always_use_local_files=True)
        ok = result["report_type"] == "aggregate"
    except Exception:
        ok = False
    accepted += ok
    rejected += not ok
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
                  "accepted": accepted, "rejected": rejected}))
"""


def rua_worker(mode: str) -> None:
    """Parse (mode "parse") or parse and store into a fresh SQLite file (mode "store")."""
    sys.path.insert(0, str(ROOT))
    from config import Config
    files = json.load(sys.stdin)
    accepted = rejected = 0
    with tempfile.TemporaryDirectory(prefix="rua-bench-") as folder:
        config = Config(database_url=f"sqlite:///{folder}/bench.db", offline=True,
                        lock_dir=folder)
        if mode == "parse":
            from ingest.files import iter_documents
            from ingest.model import Refused, ReportError
            from ingest.xml_report import parse
            start, cpu = time.perf_counter(), time.process_time()
            for path in files:
                read = 0
                for item in iter_documents(path, max_bytes=config.max_report_bytes,
                                           max_depth=config.max_archive_depth):
                    if isinstance(item, Refused):
                        continue
                    try:
                        report = parse(item)
                        for _ in report.records:
                            pass
                        read += 1
                    except ReportError:
                        pass
                accepted += read > 0
                rejected += read == 0
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        else:
            from ingest.pipeline import ingest_paths
            from store import open_db
            from store.migrations import migrate
            from store.models import Organization
            database = open_db(config.database_url)
            with database.connection_context():
                migrate(database)
                org = Organization.create(name="bench", plan="unlimited")
                start, cpu = time.perf_counter(), time.process_time()
                for result in ingest_paths(files, config=config, org=org):
                    good = result.status in ("stored", "duplicate")
                    accepted += good
                    rejected += not good
                seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "accepted": accepted, "rejected": rejected}))


def ensure_parsedmarc() -> pathlib.Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV} and installing parsedmarc (first run only)...", flush=True)
        subprocess.run([shutil.which("python3") or sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "parsedmarc"], check=True)
    return python


def run(command: list[str], files: list[str]) -> dict:
    """Run one worker on files: its own timing and counts, plus its peak RSS (wait4) in MB."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=errors, cwd=ROOT)
        process.stdin.write(json.dumps(files).encode())
        process.stdin.close()
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(command[:2])} failed:\n"
                             f"{errors.read().decode(errors='replace')[-3000:]}")
    figures = json.loads(out.decode().strip().splitlines()[-1])
    figures["rss_mb"] = usage.ru_maxrss / 1024
    return figures


def best(command, files, repeat: int) -> dict:
    runs = [run(command, files) for _ in range(repeat)]
    return min(runs, key=lambda figures: figures["seconds"])


def corpus_files(folder: pathlib.Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if p.is_file())


def table(title: str, rows: dict, units: int, unit: str) -> None:
    print(f"\n{title}")
    print(f"  {'':18}{'wall s':>8}{'CPU s':>8}{unit + '/s wall':>15}{unit + '/s CPU':>15}"
          f"{'accepted':>10}{'rejected':>10}{'peak RSS':>11}")
    for name, f in rows.items():
        print(f"  {name:18}{f['seconds']:8.3f}{f['cpu']:8.3f}{units / f['seconds']:15.1f}"
              f"{units / max(f['cpu'], 1e-9):15.1f}{f['accepted']:10d}{f['rejected']:10d}"
              f"{f['rss_mb']:8.1f} MB")


def ratios(rows: dict, goal: float, memory: bool = False) -> None:
    """Each rua row against the parsedmarc row (the first): how many times faster."""
    base = rows[next(iter(rows))]
    for name in list(rows)[1:]:
        f = rows[name]
        line = (f"  {name} vs parsedmarc: {base['seconds'] / f['seconds']:.1f}x by wall time, "
                f"{base['cpu'] / f['cpu']:.1f}x by CPU time (goal >= {goal:g}x)")
        if memory:
            line += f"; peak RSS {f['rss_mb']:.0f} MB (goal < 150 MB)"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.environ.get("RUA_CORPUS") or str(DEFAULT_CORPUS),
                        help="folder of real reports (default: RUA_CORPUS or ../shared/corpus/aggregate)")
    parser.add_argument("--records", type=int, default=50_000,
                        help="records in the generated large report (default 50000)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per measurement on the corpus; the fastest counts")
    parser.add_argument("--worker", choices=["parse", "store"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        rua_worker(args.worker)
        return
    parsedmarc = ensure_parsedmarc()
    version = subprocess.run([str(parsedmarc), "-c", "import parsedmarc; print(parsedmarc.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    commands = {
        f"parsedmarc {version}": [str(parsedmarc), "-c", PARSEDMARC_WORKER],
        "rua parse": [sys.executable, __file__, "--worker", "parse"],
        "rua parse+store": [sys.executable, __file__, "--worker", "store"],
    }
    corpus = pathlib.Path(args.corpus)
    files = corpus_files(corpus)
    if not files:
        raise SystemExit(f"no files under {corpus}")
    size = sum(os.path.getsize(f) for f in files) / 1e6
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
          "(a busy machine stretches wall time; CPU time is steadier)")
    rows = {name: best(cmd, files, args.repeat) for name, cmd in commands.items()}
    table(f"corpus {corpus}: {len(files)} files, {size:.1f} MB", rows, len(files), "files")
    ratios(rows, 5)

    sys.path.insert(0, str(ROOT))
    from ingest.demo import write_large_report
    with tempfile.TemporaryDirectory(prefix="rua-bench-large-") as folder:
        path = os.path.join(folder, f"google.com!example.com!{args.records}.xml")
        write_large_report(path, args.records, seed=1)
        size = os.path.getsize(path) / 1e6
        large = {name: run(cmd, [path]) for name, cmd in commands.items()}
    table(f"one generated report: {args.records} records, {size:.1f} MB", large, args.records,
          "records")
    ratios(large, 10, memory=True)


if __name__ == "__main__":
    main()
