"""Start-up cost of the `rua` command: what a user waits for before a command does its work.

Run from the repository root with the project's interpreter:

    .venv/bin/python bench/startup.py [--rounds 15] [--records 20] [--against OTHER/.venv/bin]

Each round runs, in a shuffled order, `python -c pass` (the floor: the interpreter alone),
`rua --help`, and `rua ingest --org bench FILE` of one small generated report into a fresh
SQLite store (made by `rua init` and `rua org create` before the timed run, not timed). Every
run is a process of its own, timed as a whole (wall clock around it, and its CPU time, which a
busy machine inflates less), after a first round, not counted, that writes the .pyc files and
the Public Suffix List's cache as an installed rua has them. Prints min and median per command
and the median above the floor. With --against, the `rua` of another install (e.g. a venv with
an older checkout installed) runs the same commands in the same rounds, and each command's
median ratio to it is printed: on a shared machine whose speed moves, only figures of the same
round compare.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = pathlib.Path(sys.executable).parent


def run(argv: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process; a failure stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu


def fresh_store(rua: str, folder: pathlib.Path, env: dict) -> dict:
    """A new SQLite store with an organization `bench`, and the environment that points at it."""
    number = len(list(folder.glob("store-*.db")))
    store_env = dict(env, RUA_DATABASE_URL=f"sqlite:///{folder}/store-{number}.db")
    run([rua, "init"], store_env)
    run([rua, "org", "create", "bench"], store_env)
    return store_env


def commands(bins: dict[str, pathlib.Path], report: pathlib.Path) -> dict[str, list[str]]:
    """Label -> argv: the floor, then `rua --help` and `rua ingest` of each install."""
    found = {"python -c pass": [sys.executable, "-c", "pass"]}
    for suffix, folder in bins.items():
        rua = str(folder / "rua")
        found[f"rua --help{suffix}"] = [rua, "--help"]
        found[f"rua ingest{suffix}"] = [rua, "ingest", "--org", "bench", str(report)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--records", type=int, default=20,
                        help="records in the ingested report")
    parser.add_argument("--against", type=pathlib.Path, default=None, metavar="BIN",
                        help="the bin folder of another install whose rua runs beside this one")
    args = parser.parse_args()
    bins = {"": BIN}
    if args.against is not None:
        bins[" (against)"] = args.against
    # Without PYTHONDONTWRITEBYTECODE: the warm-up writes the .pyc files, as any install has.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("RUA_") and key != "PYTHONDONTWRITEBYTECODE"}
    env["RUA_OFFLINE"] = "1"
    with tempfile.TemporaryDirectory(prefix="rua-startup-") as name:
        folder = pathlib.Path(name)
        env["RUA_LOCK_DIR"] = str(folder)
        report = folder / "small.xml"
        sys.path.insert(0, str(ROOT))
        from demo.reports import write_large_report
        write_large_report(report, args.records)
        targets = commands(bins, report)
        times: dict[str, list[float]] = {label: [] for label in targets}
        cpu: dict[str, list[float]] = {label: [] for label in targets}
        for number in range(args.rounds + 1):
            order = list(targets)
            random.shuffle(order)
            for label in order:
                rua = targets[label][0]
                needs_store = label.startswith("rua ingest")
                seconds, used = run(targets[label],
                                    fresh_store(rua, folder, env) if needs_store else env)
                if number > 0:   # round 0 only warms up: it writes the caches
                    times[label].append(seconds)
                    cpu[label].append(used)
    floor = statistics.median(times["python -c pass"])
    print(f"{args.rounds} interleaved rounds; rua ingest stores one report of {args.records} "
          "records into a fresh SQLite store")
    print(f"{'command':<26} {'min ms':>8} {'median ms':>10} {'above floor ms':>15} "
          f"{'CPU median ms':>14}  ratio")
    for label, seconds in times.items():
        median = statistics.median(seconds)
        line = (f"{label:<26} {min(seconds) * 1000:>8.1f} {median * 1000:>10.1f} "
                f"{(median - floor) * 1000:>15.1f} {statistics.median(cpu[label]) * 1000:>14.1f}")
        other = times.get(f"{label} (against)")
        if other is not None:
            ratios = [mine / theirs for mine, theirs in zip(seconds, other)]
            line += f"  {statistics.median(ratios):.2f} of against"
        print(line)


if __name__ == "__main__":
    main()
