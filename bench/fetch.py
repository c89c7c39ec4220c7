"""`rua fetch imap` on 1,000 report messages in a local Dovecot (prints figures; asserts nothing).

The server is the intake tests' (tests/intake/dovecot.py: Debian's dovecot-imapd on 127.0.0.1,
TLS with a trustme CA). Each round seeds the mailbox with --messages report mails (a gzipped
report of 5 records each, one report id per message), then times one of two targets, alternating:
- "floor": the IMAP work alone on one connection (SEARCH, sizes, bodies fetched in rua's chunks,
  MOVE to the done folder), nothing parsed or stored: what the server and the TLS link cost;
- "rua fetch": the command a user runs, as a whole process (interpreter start and imports
  included), into a fresh SQLite store, every message stored and filed.
Goal: 1,000 messages fetched, stored and filed in under 30 s on this 2-CPU machine.

    .venv/bin/python bench/fetch.py [--messages 1000] [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

import trustme  # noqa: E402
from imapclient import IMAPClient  # noqa: E402

from intake.imap import CHUNK_BYTES, CHUNK_MESSAGES, chunks  # noqa: E402
from tests.ingest import xmlbuild  # noqa: E402
from tests.intake import dovecot  # noqa: E402


def report_mail(number: int) -> bytes:
    records = [xmlbuild.record(source_ip=f"198.18.{number % 250}.{n + 1}", count=n + 1)
               for n in range(5)]
    xml = xmlbuild.report_bytes(records, report_id=f"bench-{number}")
    name = f"receiver.example!example.com!1700000000!1700086399!bench-{number}.xml.gz"
    return xmlbuild.mail({name: (xmlbuild.gzipped(xml), "application/gzip")})


def client(server) -> IMAPClient:
    context = ssl.create_default_context(cafile=server.ca_file)
    imap = IMAPClient("127.0.0.1", port=server.imaps_port, ssl=True, ssl_context=context)
    imap.login(dovecot.USER, dovecot.PASSWORD)
    return imap


def seed(server, folder: str, messages: list[bytes]) -> None:
    with client(server) as imap:
        imap.create_folder(folder)
        for start in range(0, len(messages), 200):
            imap.multiappend(folder, messages[start:start + 200])


def floor(server, folder: str, done: str) -> float:
    started = time.perf_counter()
    with client(server) as imap:
        imap.select_folder(folder)
        uids = imap.search(["UNDELETED"])
        sizes = {uid: data[b"RFC822.SIZE"]
                 for uid, data in imap.fetch(uids, ["RFC822.SIZE"]).items()}
        imap.create_folder(done)
        for group in chunks(uids, sizes, CHUNK_MESSAGES, CHUNK_BYTES):
            bodies = imap.fetch(group, ["BODY.PEEK[]"])
            assert len(bodies) == len(group)
            imap.move(group, done)
    return time.perf_counter() - started


def rua_fetch(server, folder: str, done: str, work: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    secret = os.path.join(work, "password")
    with open(secret, "w") as stream:
        stream.write(dovecot.PASSWORD)
    env.update(RUA_DATABASE_URL=f"sqlite:///{work}/bench.db", RUA_LOCK_DIR=work,
               RUA_OFFLINE="1", RUA_IMAP_URL=server.url(folder), RUA_IMAP_PASSWORD_FILE=secret,
               RUA_IMAP_CA_FILE=server.ca_file, RUA_IMAP_DONE_FOLDER=done)
    rua = str(pathlib.Path(sys.executable).parent / "rua")
    setup = (["init"], ["org", "create", "Bench"], ["domain", "add", "Bench", "example.com"])
    for command in setup:
        subprocess.run([rua, *command], env=env, check=True, capture_output=True)
    started = time.perf_counter()
    result = subprocess.run([rua, "fetch", "imap"], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    if result.returncode != 0 or " 0 duplicates, 0 refused" not in summary:
        raise SystemExit(f"rua fetch failed ({result.returncode}): {summary} {result.stderr}")
    return seconds


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    messages = [report_mail(n) for n in range(args.messages)]
    server = dovecot.start(trustme.CA())
    times: dict[str, list[float]] = {"floor": [], "rua fetch": []}
    try:
        for round_number in range(args.rounds):
            order = ["floor", "rua fetch"] if round_number % 2 == 0 else ["rua fetch", "floor"]
            for target in order:
                folder = f"r{round_number}-{target.replace(' ', '-')}"
                seed(server, folder, messages)
                with tempfile.TemporaryDirectory(prefix="rua-bench-fetch-") as work:
                    if target == "floor":
                        seconds = floor(server, folder, folder + "-done")
                    else:
                        seconds = rua_fetch(server, folder, folder + "-done", work)
                times[target].append(seconds)
                print(f"round {round_number + 1}: {target:9} {seconds:6.2f} s "
                      f"({args.messages / seconds:,.0f} messages/s)", flush=True)
    finally:
        dovecot.stop(server)
    for target, values in times.items():
        print(f"{target:9}: median {statistics.median(values):.2f} s for {args.messages:,} "
              f"messages (min {min(values):.2f}, max {max(values):.2f})")
    ratio = statistics.median(times["rua fetch"]) / statistics.median(times["floor"])
    print(f"rua fetch / floor: {ratio:.1f}x; goal: {args.messages:,} messages in under 30 s")


if __name__ == "__main__":
    main()
