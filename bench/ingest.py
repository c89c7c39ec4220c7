"""Ingest speed: rua against parsedmarc on the same inputs, offline, in one run; prints figures.

Run from the repository root with the project's interpreter:

    .venv/bin/python bench/ingest.py [--corpus DIR] [--records 50000] [--repeat 1]
        [--postgres postgresql://USER@HOST/SCRATCH_DB]

parsedmarc lives only in bench/.venv-parsedmarc (created here on first use with
`python3 -m venv` and pip). Every measurement runs in its own subprocess. "work" figures are
taken inside it around the work (interpreter start and imports excluded); "process" figures are
the whole child (start-up and imports included: wall around it, CPU and peak RSS from wait4).
The row "rua ingest" is the command a user runs, `rua ingest --org bench FILE...` into a fresh
SQLite store, timed as a whole process only. It also prints the start-up (`rua --help` as a
whole process) and where parse+store's time goes: parse (the parse-only run), source facts and
commit (timed inside the run), store (the rest).

With `--against TREE` (another source tree, e.g. `git archive REV | tar -x -C TREE` with a change
applied) it measures instead rua parse and parse+store from this tree and from TREE, in
`--rounds` interleaved rounds (shuffled each round), and prints each tree's median work CPU and
TREE's ratio to this tree's per round: what a mechanism is worth, on a machine whose speed moves.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import pathlib
import random
import shutil
import statistics
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


def rua_worker(mode: str, root: str, database_url: str | None = None) -> None:
    """Parse (mode "parse") or parse and store into a fresh SQLite file (mode "store"), or into
    the scratch Postgres database_url emptied first, with the code of the source tree root."""
    sys.path.insert(0, root)
    from config import Config
    files = json.load(sys.stdin)
    accepted = rejected = 0
    split = {}
    with tempfile.TemporaryDirectory(prefix="rua-bench-") as folder:
        config = Config(database_url=database_url or f"sqlite:///{folder}/bench.db",
                        offline=True, lock_dir=folder)
        # The corpus holds many policy domains: the caps on domains from strangers are lifted
        # where the tree has them (an older tree compared with --against may not).
        if hasattr(config, "max_auto_domains"):
            config = config.replace(max_auto_domains=10**9, max_auto_domains_per_day=10**9)
        if mode == "floor":
            seconds, cpu, accepted, rejected = _floor(files, config)
        elif mode == "parse":
            start, cpu = time.perf_counter(), time.process_time()
            for path in files:
                read = _read(path, config, lambda parsed: sum(1 for _ in parsed.records))
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
                if database_url:       # a scratch database: start it empty
                    database.execute_sql("DROP SCHEMA public CASCADE")
                    database.execute_sql("CREATE SCHEMA public")
                migrate(database)
                org = Organization.create(name="bench", plan="unlimited")
                split = _time_sections(database)
                start, cpu = time.perf_counter(), time.process_time()
                for result in ingest_paths(files, config=config, org=org):
                    good = result.status in ("stored", "duplicate")
                    accepted += good
                    rejected += not good
                seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "accepted": accepted, "rejected": rejected,
                      "split": split}))


def _read(path: str, config, use) -> int:
    """Parse each report of the file and hand it to use(parsed); how many were read whole."""
    from ingest.files import iter_documents
    from ingest.model import Document, ReportError
    from ingest.xml_report import parse
    read = 0
    for item in iter_documents(path, max_bytes=config.max_report_bytes,
                               max_depth=config.max_archive_depth):
        if not isinstance(item, Document):        # refused input: not a report
            continue
        try:
            use(parse(item))
            read += 1
        except ReportError:
            pass
    return read


def _floor(files: list[str], config) -> tuple:
    """The floor into a store of its own: migrate, one organization, then floor_writes."""
    from store import open_db
    database = open_db(config.database_url)
    with database.connection_context():
        return floor_writes(database, files, config, floor_store(database))


def floor_store(database) -> str:
    """Make the floor's store (the schema, one organization) on the open database; its id."""
    from store.migrations import migrate
    from store.models import Organization
    migrate(database)
    return Organization.create(name="bench", plan="unlimited").id


def floor_writes(database, files: list[str], config, org: str, tag: str = "") -> tuple:
    """The least any design pays: parse each file, then write only the report's row and its
    records (no routing, dedupe, classification, rollups or source facts) into the store's own
    tables and indexes, one transaction per 1,000 reports. (seconds, CPU seconds, files
    accepted, files rejected); tag sets apart the dedupe keys of processes writing at once."""
    from store import compiled as sql
    from store.models import Record, Report
    accepted = rejected = 0
    report_fields, record_fields = sql.columns(Report), sql.columns(Record)[1:]
    as_json = Record.auth_dkim.db_value
    numbers = itertools.count()
    stored = []

    def write(parsed):
        meta = parsed.meta
        report = Report(org=org, dedupe_key=f"{tag}{next(numbers)}", org_name=meta.org_name,
                        report_id=meta.report_id, date_begin=meta.date_begin,
                        date_end=meta.date_end, day_begin="2026-01-01",
                        day_end="2026-01-01", domain=meta.domain or "")
        sql.insert_rows(Report, report_fields, [sql.values_of(report, report_fields)])
        rows = [(report.id, org, n, r.source_ip, r.count, r.disposition or "", r.dkim or "",
                 r.spf or "", as_json(r.reasons), r.envelope_to or "", r.envelope_from or "",
                 r.header_from or "", as_json(r.auth_dkim), as_json(r.auth_spf), "{}",
                 "unknown") for n, r in enumerate(parsed.records)]
        sql.insert_rows(Record, record_fields, rows, converted=True)
        stored.append(report.id)
        if len(stored) % 1000 == 0:
            database.commit()
            database.begin()

    start, cpu = time.perf_counter(), time.process_time()
    database.begin()
    for path in files:
        read = _read(path, config, write)
        accepted += read > 0
        rejected += read == 0
    database.commit()
    return time.perf_counter() - start, time.process_time() - cpu, accepted, rejected


def _time_sections(database) -> dict:
    """Wall seconds spent in source facts and in commits, filled in as ingest runs (the
    functions wrapped where this tree has them)."""
    split = {"source facts": 0.0, "commit": 0.0}

    def timed(name, function):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                split[name] += time.perf_counter() - started
        return wrapper
    database.commit = timed("commit", database.commit)
    try:
        from ingest import source_facts
    except ImportError:         # a tree from before source facts (--against)
        return split
    source_facts.save = timed("source facts", source_facts.save)
    return split


def ensure_parsedmarc() -> pathlib.Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV} and installing parsedmarc (first run only)...", flush=True)
        subprocess.run([shutil.which("python3") or sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "parsedmarc"], check=True)
    return python


def run(command: list[str], files: list[str]) -> dict:
    """Run one worker on files: its own timing and counts, plus the whole process's figures."""
    if command[0] == "rua-ingest":
        return run_cli(files)
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=errors, cwd=ROOT)
        process.stdin.write(json.dumps(files).encode())
        process.stdin.close()
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(command[:2])} failed:\n"
                             f"{errors.read().decode(errors='replace')[-3000:]}")
    figures = json.loads(out.decode().strip().splitlines()[-1])
    figures.update(process_figures(wall, usage))
    return figures


def process_figures(wall: float, usage) -> dict:
    return {"process_seconds": wall, "process_cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024}


def run_cli(files: list[str]) -> dict:
    """`rua ingest --org bench --format json FILE...` into a fresh store, as a whole process."""
    rua = pathlib.Path(sys.executable).with_name("rua")
    with tempfile.TemporaryDirectory(prefix="rua-bench-cli-") as folder:
        settings = {"RUA_DATABASE_URL": f"sqlite:///{folder}/bench.db", "RUA_OFFLINE": "1",
                    "RUA_LOCK_DIR": folder, "RUA_MAX_AUTO_DOMAINS": "1000000000",
                    "RUA_MAX_AUTO_DOMAINS_PER_DAY": "1000000000"}
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")} | settings
        setup = ("import sys; sys.path.insert(0, %r)\n"
                 "from store import open_db\nfrom store.migrations import migrate\n"
                 "from store.models import Organization\n"
                 "database = open_db(%r)\n"
                 "with database.connection_context():\n"
                 "    migrate(database)\n"
                 "    Organization.create(name='bench', plan='unlimited')\n"
                 % (str(ROOT), env["RUA_DATABASE_URL"]))
        subprocess.run([sys.executable, "-c", setup], check=True, cwd=ROOT, env=env)
        with tempfile.TemporaryFile() as errors:
            started = time.perf_counter()
            process = subprocess.Popen([str(rua), "ingest", "--org", "bench", "--format", "json",
                                        *files], stdout=subprocess.PIPE, stderr=errors,
                                       cwd=ROOT, env=env)
            out = process.stdout.read()
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
            if os.waitstatus_to_exitcode(status) not in (0, 1):   # 1: some input refused
                errors.seek(0)
                raise SystemExit(f"rua ingest failed:\n"
                                 f"{errors.read().decode(errors='replace')[-3000:]}")
    statuses = [json.loads(line)["status"] for line in out.decode().splitlines() if line.strip()]
    accepted = sum(status in ("stored", "duplicate") for status in statuses)
    figures = {"seconds": None, "cpu": None, "accepted": accepted,
               "rejected": len(statuses) - accepted}
    figures.update(process_figures(wall, usage))
    return figures


def startup(repeat: int) -> dict:
    """`rua --help` as a whole process, the fastest of repeat runs."""
    rua = pathlib.Path(sys.executable).with_name("rua")
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        process = subprocess.Popen([str(rua), "--help"], stdout=subprocess.DEVNULL, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        runs.append(process_figures(time.perf_counter() - started, usage))
    return min(runs, key=lambda figures: figures["process_seconds"])


def where_time_goes(rows: dict) -> None:
    """Work wall seconds of rua parse+store, split: parse (the parse-only run), source facts and
    commit (timed inside the run), store (the rest)."""
    parse = rows["rua parse"]["seconds"]
    for name in [n for n in rows if n.startswith("rua parse+store")]:
        f = rows[name]
        split = f.get("split") or {}
        facts, commit = split.get("source facts", 0.0), split.get("commit", 0.0)
        store = f["seconds"] - parse - facts - commit
        print(f"  where the time goes, {name} (work wall s): parse {parse:.3f}, store "
              f"{store:.3f}, source facts {facts:.3f}, commit {commit:.3f}")


def best(command, files, repeat: int) -> dict:
    runs = [run(command, files) for _ in range(repeat)]
    return min(runs, key=lambda figures: figures["process_cpu"])


def corpus_files(folder: pathlib.Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if p.is_file())


def _cell(value, width: int, digits: int = 3) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:{width}.{digits}f}"


def table(title: str, rows: dict, units: int, unit: str) -> None:
    print(f"\n{title}")
    print(f"  {'':18}{'work':>16}{'whole process':>18}{unit + '/s':>12}")
    print(f"  {'':18}{'wall s':>8}{'CPU s':>8}{'wall s':>9}{'CPU s':>9}{'work CPU':>12}"
          f"{'accepted':>10}{'rejected':>10}{'peak RSS':>11}")
    for name, f in rows.items():
        rate = None if f["cpu"] is None else units / max(f["cpu"], 1e-9)
        print(f"  {name:18}{_cell(f['seconds'], 8)}{_cell(f['cpu'], 8)}"
              f"{_cell(f['process_seconds'], 9)}{_cell(f['process_cpu'], 9)}{_cell(rate, 12, 1)}"
              f"{f['accepted']:10d}{f['rejected']:10d}{f['rss_mb']:8.1f} MB")


def ratios(rows: dict, goal: float, memory: bool = False) -> None:
    """Each rua row against the parsedmarc row (the first): times faster, by every clock."""
    base = rows[next(iter(rows))]
    print(f"  times faster than parsedmarc (goal >= {goal:g}x; CPU is steadier on a busy machine):")
    print(f"  {'':18}{'work CPU':>10}{'work wall':>11}{'process CPU':>13}{'process wall':>14}")
    for name in list(rows)[1:]:
        f = rows[name]
        cells = [None if f[k] is None else base[k] / max(f[k], 1e-9)
                 for k in ("cpu", "seconds", "process_cpu", "process_seconds")]
        line = f"  {name:18}" + "".join(
            f"{'-' if c is None else f'{c:.1f}x':>{w}}" for c, w in zip(cells, (10, 11, 13, 14)))
        met = cells[0] if cells[0] is not None else cells[2]
        line += f"   {'meets' if met >= goal else 'short of'} {goal:g}x"
        if memory:
            under = "under" if f["rss_mb"] < 150 else "over"
            line += f"; peak RSS {f['rss_mb']:.0f} MB ({under} 150 MB)"
        print(line)


def large_report(folder: str, records: int) -> str:
    """Write the generated large report into folder; its path."""
    sys.path.insert(0, str(ROOT))
    from demo.reports import write_large_report
    path = os.path.join(folder, f"google.com!example.com!{records}.xml")
    write_large_report(path, records, seed=1)
    return path


def tls_corpus(corpus: pathlib.Path, repeat: int) -> None:
    """SMTP TLS reports (the tlsrpt folder beside the corpus) against as many of the smallest
    DMARC corpus files, rua parse+store on each: TLS reports are small, so about the same time."""
    tls_files = corpus_files(corpus.parent / "tlsrpt")
    if not tls_files:
        print(f"\nno TLS reports under {corpus.parent / 'tlsrpt'}: TLS figures skipped")
        return
    small = sorted(corpus_files(corpus), key=os.path.getsize)[:len(tls_files)]
    store = [sys.executable, __file__, "--worker", "store"]
    rows = {"TLS reports": best(store, tls_files, repeat),
            "DMARC (smallest)": best(store, small, repeat)}
    table(f"rua parse+store, {len(tls_files)} TLS report files against the {len(small)} smallest "
          f"DMARC files", rows, len(tls_files), "files")
    tls, dmarc = rows["TLS reports"]["cpu"], rows["DMARC (smallest)"]["cpu"]
    print(f"TLS / DMARC work CPU: {tls / dmarc:.2f} (goal: about 1)")


def compare_trees(args) -> None:
    """Work CPU of parse and parse+store, this tree against args.against, interleaved rounds."""
    trees = {"this tree": str(ROOT), "against": str(pathlib.Path(args.against).resolve())}
    corpus = corpus_files(pathlib.Path(args.corpus))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"against = {trees['against']}")
    with tempfile.TemporaryDirectory(prefix="rua-bench-large-") as folder:
        inputs = {f"corpus ({len(corpus)} files)": corpus,
                  f"{args.records} records": [large_report(folder, args.records)]}
        targets = [(tree, mode, data) for data in inputs for mode in ("parse", "store")
                   for tree in trees]
        cpu: dict[tuple, list[float]] = {target: [] for target in targets}
        for number in range(args.rounds):
            order = list(targets)
            random.shuffle(order)
            for tree, mode, data in order:
                command = [sys.executable, __file__, "--worker", mode, "--root", trees[tree]]
                cpu[(tree, mode, data)].append(run(command, inputs[data])["cpu"])
            print(f"  round {number + 1} of {args.rounds} done", flush=True)
    print(f"\n  {'':34}{'this tree':>10}{'against':>10}{'ratio':>8}{'(low-high)':>13}"
          "   work CPU s, medians; ratio = against / this tree, per round")
    for data in inputs:
        for mode in ("parse", "store"):
            mine, theirs = cpu[("this tree", mode, data)], cpu[("against", mode, data)]
            ratio = [b / a for a, b in zip(mine, theirs)]
            label = f"{data} {'parse' if mode == 'parse' else 'parse+store'}"
            print(f"  {label:34}{statistics.median(mine):10.3f}{statistics.median(theirs):10.3f}"
                  f"{statistics.median(ratio):8.2f}{f'({min(ratio):.2f}-{max(ratio):.2f})':>13}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=os.environ.get("RUA_CORPUS") or str(DEFAULT_CORPUS),
                        help="folder of real reports (default: RUA_CORPUS, else the corpus beside the checkout)")
    parser.add_argument("--records", type=int, default=50_000,
                        help="records in the generated large report (default 50000)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per measurement (corpus and large report); the fastest "
                             "by process CPU counts")
    parser.add_argument("--against", metavar="TREE",
                        help="compare rua parse and parse+store with the source tree TREE, "
                             "interleaved, instead of measuring against parsedmarc")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --against (default 5)")
    parser.add_argument("--postgres", metavar="URL",
                        help="also parse+store into this scratch Postgres database (its tables "
                             "are dropped first) and give its time against SQLite's")
    parser.add_argument("--worker", choices=["parse", "store", "floor"], help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    args = parser.parse_args()
    # As installed: the children write .pyc files and the Public Suffix List's cache (an
    # environment with PYTHONDONTWRITEBYTECODE would have rua compile every module and parse
    # the list in every process, 0.1 s of the corpus run), and one unmeasured run writes them.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.worker:
        rua_worker(args.worker, args.root, args.database_url)
        return
    if args.against:
        compare_trees(args)
        return
    parsedmarc = ensure_parsedmarc()
    version = subprocess.run([str(parsedmarc), "-c", "import parsedmarc; print(parsedmarc.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    commands = {
        f"parsedmarc {version}": [str(parsedmarc), "-c", PARSEDMARC_WORKER],
        "rua parse": [sys.executable, __file__, "--worker", "parse"],
        "rua parse+store": [sys.executable, __file__, "--worker", "store"],
        "rua ingest": ["rua-ingest"],
        "floor (parse + bare writes)": [sys.executable, __file__, "--worker", "floor"],
    }
    if args.postgres:
        commands["rua parse+store (Postgres)"] = [sys.executable, __file__, "--worker", "store",
                                                  "--database-url", args.postgres]
    corpus = pathlib.Path(args.corpus)
    files = corpus_files(corpus)
    if not files:
        raise SystemExit(f"no files under {corpus}")
    size = sum(os.path.getsize(f) for f in files) / 1e6
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
          "(a busy machine stretches wall time; CPU time is steadier)")
    started = startup(max(3, args.repeat))
    print(f"start-up: `rua --help` {started['process_seconds'] * 1000:.0f} ms wall, "
          f"{started['process_cpu'] * 1000:.0f} ms CPU, peak RSS {started['rss_mb']:.0f} MB "
          "(whole process, fastest of the runs)")
    for command in commands.values():
        run(command, files[:5])
    rows = {name: best(cmd, files, args.repeat) for name, cmd in commands.items()}
    table(f"corpus {corpus}: {len(files)} files, {size:.1f} MB", rows, len(files), "files")
    ratios(rows, 3)
    where_time_goes(rows)
    if args.postgres:
        sqlite, postgres = rows["rua parse+store"], rows["rua parse+store (Postgres)"]
        print(f"  Postgres / SQLite, parse+store work wall: "
              f"{postgres['seconds'] / sqlite['seconds']:.2f} (goal < 2)")
    tls_corpus(corpus, args.repeat)

    with tempfile.TemporaryDirectory(prefix="rua-bench-large-") as folder:
        path = large_report(folder, args.records)
        size = os.path.getsize(path) / 1e6
        large = {name: best(cmd, [path], args.repeat) for name, cmd in commands.items()}
    table(f"one generated report: {args.records} records, {size:.1f} MB", large, args.records,
          "records")
    ratios(large, 8, memory=True)
    where_time_goes(large)


if __name__ == "__main__":
    main()
