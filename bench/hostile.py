"""Hostile mail at the rua= address, replayed: time and peak memory of each attack beside a
normal report (or, for a message, a normal message) of the same size (issues 21 and 24), and
hostile reports beside a normal report of the same decompressed size (issue 34). Goals: no
attack over 2 s of CPU or 300 MB, nor (issue 34) over twice what its normal report costs.

Run from the repository root with the project's interpreter:

    .venv/bin/python bench/hostile.py [--subdomains 20000] [--report-mb 50] [--only NAME...]

Each input is ingested by `ingest_paths` (what `rua ingest --org` runs) in a fresh child process
on a fresh SQLite store under the default settings, with the organization "Acme" monitoring
example.com by hand. CPU is the child's process time around the ingest; peak is its peak RSS
(VmHWM), interpreter and imports included. The inputs are generated in a temporary folder.

AFTER_ATTACK is the hook for figures taken on the store an attack left behind (e.g. the next
health request after the subdomain zip): AFTER_ATTACK[name] = f(outcome) -> {label: text};
outcome holds "database_url", "org_id", "domain" and the attack's figures.
"""
from __future__ import annotations

import argparse
import base64
import gzip
import json
import pathlib
import subprocess
import sys
import tempfile
import zipfile
import zlib
from typing import Callable

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import hostile_reports as hr  # noqa: E402  (issue 34's reports)
from bench.hostile_requests import HOOKS  # noqa: E402  (the API's figures after an attack)
from tests.ingest import hostile_mail  # noqa: E402  (the tests' hostile messages)
from tests.ingest import xmlbuild as xb  # noqa: E402  (the tests' report builder)

MB = 1 << 20
GOAL_CPU, GOAL_MB = 2.0, 300
AFTER_ATTACK: dict[str, Callable[[dict], dict]] = dict(HOOKS)

# Runs in the child: a fresh store, one organization, one ingest; prints its figures as JSON.
WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from config import Config
from store import open_db
from store.migrations import migrate
from store.models import Domain, Organization
from ingest.pipeline import ingest_paths
from cli.ingest_display import _text

def peak_mb():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024

url, path = sys.argv[2], sys.argv[3]
config = Config().replace(database_url=url)
database = open_db(url)
with database.connection_context():
    migrate(database)
    org = Organization.create(name="Acme", plan="free")
    Domain.create(org=org, name="example.com", source="manual")
    before, cpu, wall = peak_mb(), time.process_time(), time.perf_counter()
    results = list(ingest_paths([path], config=config))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    lines = [_text(r) for r in results]
    print(json.dumps({
        "cpu": cpu, "wall": wall, "peak_mb": peak_mb(), "start_mb": before,
        "stored": sum(r["status"] == "stored" for x in results for r in x.reports),
        "refused": sum(len(x.refusals) for x in results),
        "domains": Domain.select().where(Domain.org == org.id).count(),
        "raw_escape_printed": any("\x1b" in line for line in lines),
        "first_error": next((x.error for x in results if x.error), "")[:160],
        "database_url": url, "org_id": org.id}))
"""


def subdomains_zip(folder: pathlib.Path, count: int) -> pathlib.Path:
    """One report per subdomain sN.example.com, all in one zip (each would add an auto domain)."""
    path = folder / "subdomains.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(count):
            archive.writestr(f"s{n}.xml", xb.report_bytes(domain=f"s{n}.example.com",
                                                          report_id=f"s{n}"))
    return path


def bombs_zip(folder: pathlib.Path, members: int = 50, size: int = 65 * MB) -> pathlib.Path:
    """members × gzip(gzip(size zero bytes)): tiny, and each level multiplies the work."""
    inner = zlib.compressobj(9, zlib.DEFLATED, 31)
    layer = inner.compress(bytes(size)) + inner.flush()
    bomb = gzip.compress(layer, compresslevel=9, mtime=0)
    path = folder / "bombs.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for n in range(members):
            archive.writestr(f"b{n}.xml.gz", bomb)
    return path


def report_file(folder: pathlib.Path, name: str, size: int, *, records_first: bool) -> pathlib.Path:
    """A report of about `size` bytes of distinct records, records first or in schema order."""
    order = (("records", "report_metadata", "policy_published") if records_first
             else ("report_metadata", "policy_published", "records"))
    head, tail = xb.report(["@@"], order=order, report_id=name).split("<record>@@</record>")
    path = folder / f"{name}.xml"
    with open(path, "w") as out:
        out.write(head)
        written, n = len(head), 0
        while written < size - len(tail):
            text = xb.element("record", xb.record(
                source_ip=f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}", count=n % 7 + 1))
            out.write(text)
            written, n = written + len(text), n + 1
        out.write(tail)
    return path


def names_zip(folder: pathlib.Path) -> pathlib.Path:
    """Members named with terminal escape sequences (a title change, a screen clear, RLO)."""
    path = folder / "names.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(20):
            archive.writestr(f"\x1b]0;owned{n}\x07\x1b[2J\u202e{n}.xml", b"<feedback>")
        archive.writestr("good.xml", xb.report_bytes(report_id="good"))
    return path


def message_file(folder: pathlib.Path, name: str, data: bytes) -> pathlib.Path:
    path = folder / f"{name}.eml"
    path.write_bytes(data)
    return path


def normal_mail(folder: pathlib.Path, name: str, size: int) -> pathlib.Path:
    """A receiver's message of about `size` bytes: one report attached as base64 XML."""
    report = report_file(folder, name, size * 3 // 4 - 4096, records_first=False)
    body = base64.encodebytes(report.read_bytes())
    head = (b'From: noreply@receiver.example\nSubject: Report\nMIME-Version: 1.0\n'
            b'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/xml; '
            b'name="report.xml"\nContent-Transfer-Encoding: base64\n\n')
    return message_file(folder, name, head + body + b"--b--\n")


def run(path: pathlib.Path, folder: pathlib.Path) -> dict:
    """Ingest path in a fresh child process on a fresh store; the child's figures."""
    url = f"sqlite:///{folder / (path.stem + '.db')}"
    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT), url, str(path)],
                          capture_output=True, text=True, check=True)
    return {**json.loads(done.stdout), "bytes": path.stat().st_size}


def row(label: str, figures: dict) -> str:
    over = figures["cpu"] > GOAL_CPU or figures["peak_mb"] > GOAL_MB
    return (f"{label:<22} {figures['bytes'] / MB:>8.2f} {figures['cpu']:>7.2f} "
            f"{figures['wall']:>7.2f} {figures['peak_mb']:>7.0f} {figures['stored']:>7} "
            f"{figures['refused']:>7} {figures['domains']:>7}  {'OVER' if over else 'ok'}")


def ratio(attack: float, normal: float) -> str:
    return f"{attack / normal:.2f}x" if normal > 0 else "n/a"


def attacks(folder: pathlib.Path, args) -> dict[str, Callable[[], pathlib.Path]]:
    return {
        "subdomains": lambda: subdomains_zip(folder, args.subdomains),
        "bombs": lambda: bombs_zip(folder),
        "records_first": lambda: report_file(folder, "records_first", args.report_mb * MB,
                                             records_first=True),
        "names": lambda: names_zip(folder),
        "semicolons": lambda: message_file(folder, "semicolons", hostile_mail.semicolons()),
        "empty_parts": lambda: message_file(folder, "empty_parts",
                                            hostile_mail.empty_parts(66_000_000)),
        "nested": lambda: message_file(folder, "nested", hostile_mail.nested(100_000)),
        "mbox_lines": lambda: message_file(folder, "mbox_lines",
                                           b"From x\n" + b"\n" * 66_000_000),
        "tls_policies": lambda: hr.tls_policies(folder, "tls_policies"),
        "tls_unroutable": lambda: hr.tls_policies(folder, "tls_unroutable", "nobody.example"),
        "tls_types": lambda: hr.tls_result_types(folder, "tls_types"),
        "tls_padding": lambda: hr.tls_padded(folder, "tls_padding"),
        "tls_nan": lambda: hr.tls_nan(folder, "tls_nan"),
        "tls_counts": lambda: hr.tls_counts(folder, "tls_counts"),
        "dmarc_auth": lambda: hr.dmarc_auth(folder, "dmarc_auth"),
        "dmarc_counts": lambda: hr.dmarc_counts(folder, "dmarc_counts"),
    }


def normal_beside(folder: pathlib.Path, name: str, path: pathlib.Path, args) -> pathlib.Path:
    """The normal input an attack is measured beside: a message for a message; else a report of
    its kind and decompressed size (at most the report cap, or the TLS caps' largest)."""
    if path.suffix == ".eml":
        return normal_mail(folder, f"normal_{name}", path.stat().st_size)
    size = min(hr.decompressed_size(path), args.report_mb * MB)
    if name.startswith("tls_"):
        return hr.tls_normal(folder, f"normal_{name}", size)
    return report_file(folder, f"normal_{name}", size, records_first=False)


def stored_tls_body(outcome: dict) -> dict:
    """What the store keeps of a padded TLS report."""
    from store import open_db
    from store.models import TlsReport
    with open_db(outcome["database_url"]).connection_context():
        sizes = [len(report.body.encode()) for report in TlsReport.select()]
    return {"stored body": f"{sizes[0]:,} bytes" if sizes else "nothing stored"}


AFTER_ATTACK["tls_padding"] = stored_tls_body


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subdomains", type=int, default=20_000)
    parser.add_argument("--report-mb", type=int, default=50)
    parser.add_argument("--only", nargs="*", help="attacks to run (default: all)")
    args = parser.parse_args()
    print(f"{'input':<22} {'MB':>8} {'CPU s':>7} {'wall s':>7} {'peak MB':>7} {'stored':>7} "
          f"{'refused':>7} {'domains':>7}  goal ({GOAL_CPU} s CPU, {GOAL_MB} MB)")
    with tempfile.TemporaryDirectory(prefix="rua-hostile-") as tmp:
        folder = pathlib.Path(tmp)
        for name, make in attacks(folder, args).items():
            if args.only and name not in args.only:
                continue
            path = make()
            figures = run(path, folder)
            normal_path = normal_beside(folder, name, path, args)
            normal = run(normal_path, folder)
            print(row(name, figures))
            print(row(f"  normal, same size", normal))
            print(f"  decompressed: {hr.decompressed_size(path) / MB:.2f} MB, normal "
                  f"{hr.decompressed_size(normal_path) / MB:.2f} MB; CPU "
                  f"{ratio(figures['cpu'], normal['cpu'])}, peak "
                  f"{ratio(figures['peak_mb'], normal['peak_mb'])} the normal's (goal <= 2x)")
            if figures["first_error"]:
                print(f"  refusal: {figures['first_error']!r}")
            if normal["first_error"]:
                print(f"  normal's refusal: {normal['first_error']!r}")
            if name == "names":
                print(f"  raw escape printed: {figures['raw_escape_printed']}")
            extra = AFTER_ATTACK.get(name)
            if extra is not None:
                for label, text in extra({**figures, "domain": "example.com"}).items():
                    print(f"  {label}: {text}")


if __name__ == "__main__":
    main()
