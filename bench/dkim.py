"""What verifying report mail's DKIM signatures adds to fetching it from a Maildir (prints
figures; asserts nothing).

--messages report mails signed as Google signs them (rsa-sha256, relaxed/relaxed, 2048-bit
key, a gzipped report of 5 records each, one report id per message), the key published by the
test suite's DNS server on 127.0.0.1 (tests/dns_server.py). Each round fetches the same Maildir
twice into fresh SQLite stores (`intake.maildir.drain`, as `rua fetch maildir` does), in
alternating order: with verification, and without it (MailSignatures replaced by nothing that
checks). Goal: verification adds under 20%.

    .venv/bin/python bench/dkim.py [--messages 1000] [--rounds 3]
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

from config import Config  # noqa: E402
from intake import maildir  # noqa: E402
from rules.authenticity import NOT_VERIFIED  # noqa: E402
from store import open_db  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.models import Report  # noqa: E402
from tests.dns_server import DNSServer  # noqa: E402
from tests.factories import make_domain, make_org  # noqa: E402
from tests.ingest import xmlbuild  # noqa: E402
from tests.signed_mail import report_message, rsa_key, signed  # noqa: E402

KEY = rsa_key("google.com", "20230601", 2048)
VERIFYING = maildir.MailSignatures


def messages(count: int) -> list[bytes]:
    made = []
    for number in range(count):
        records = [xmlbuild.record(source_ip=f"198.18.{number % 250}.{n + 1}", count=n + 1)
                   for n in range(5)]
        xml = xmlbuild.report_bytes(records, org_name="google.com", report_id=f"bench-{number}",
                                    metadata={"email": "noreply-dmarc-support@google.com"})
        message = report_message(attachment=xmlbuild.gzipped(xml), content_type="application/gzip",
                                 name="google.com!example.com!1700000000!1700086399.xml.gz",
                                 subject=f"Report domain: example.com Submitter: google.com "
                                         f"Report-ID: {number}")
        made.append(signed(message, KEY))
    return made


def fill(folder: pathlib.Path, mails: list[bytes]) -> None:
    for sub in ("new", "cur", "tmp"):
        (folder / sub).mkdir(parents=True)
    for number, data in enumerate(mails):
        (folder / "new" / f"{number:06d}.bench").write_bytes(data)


def fetch(work: pathlib.Path, config: Config, mails: list[bytes], verify: bool) -> float:
    """One drain of a fresh Maildir into a fresh store; seconds, every report stored."""
    store, folder = work / "bench.db", work / "Maildir"
    config = config.replace(database_url=f"sqlite:///{store}", lock_dir=str(work))
    database = open_db(config.database_url)
    fill(folder, mails)
    maildir.MailSignatures = VERIFYING if verify else (lambda config: lambda raw: NOT_VERIFIED)
    results = []
    try:
        with database.connection_context():
            migrate(database)
            make_domain(make_org(name="Bench"), "example.com")
            started = time.perf_counter()
            maildir.drain(str(folder), config, results.append)
            seconds = time.perf_counter() - started
            verified = Report.select().where(Report.authenticity == "verified").count()
    finally:
        maildir.MailSignatures = VERIFYING
    stored = sum(1 for r in results if r.status == "stored")
    if stored != len(mails) or verified != (len(mails) if verify else 0):
        raise SystemExit(f"{stored} of {len(mails)} stored, {verified} verified")
    return seconds


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    mails = messages(args.messages)
    server = DNSServer().start()
    server.zone("google.com", KEY.zone_line())
    config = Config(dns_nameservers="127.0.0.1", dns_port=server.port, dns_timeout=1.0)
    times: dict[str, list[float]] = {"without": [], "verifying": []}
    try:
        for round_number in range(args.rounds):
            order = ["without", "verifying"] if round_number % 2 == 0 else ["verifying", "without"]
            for target in order:
                work = pathlib.Path(tempfile.mkdtemp(prefix="rua-bench-dkim-"))
                try:
                    seconds = fetch(work, config, mails, target == "verifying")
                finally:
                    shutil.rmtree(work)
                times[target].append(seconds)
                print(f"round {round_number + 1}: {target:9} {seconds:6.2f} s "
                      f"({args.messages / seconds:,.0f} messages/s)", flush=True)
    finally:
        server.stop()
    asked = len(server.asked())
    ratios = [v / w for v, w in zip(times["verifying"], times["without"])]
    for target, values in times.items():
        print(f"{target:9}: median {statistics.median(values):.2f} s for {args.messages:,} messages")
    print(f"verification adds {100 * (statistics.median(ratios) - 1):.1f}% (median of the rounds' "
          f"ratios; lowest {100 * (min(ratios) - 1):.1f}%, highest {100 * (max(ratios) - 1):.1f}%); "
          f"DNS questions in all: {asked} (one per verifying run); goal: under 20%")


if __name__ == "__main__":
    main()
