"""A full live DNS check of 200 monitored domains against a local DNS server (prints figures).

The server is the test suite's (tests/dns_server.py) on 127.0.0.1, in a process of its own:
each domain a zone of its
own with MX, DMARC (reports to an external host that authorizes them by a wildcard), SPF with
two levels of includes, a 2048-bit DKIM key, TLS-RPT, and BIMI on one in four. Two targets of
200 domains each, stored in a temporary SQLite file through dnscheck.jobs.check_stored (look-ups,
verdicts, states, the Domain rows and the events): "all answer", and "one silent" where one
domain's nameserver never answers (every question under it is dropped), so that domain costs
its timeouts. They run in alternating rounds, each with a fresh resolver cache. Goal: a full
check under 10 s with the silent one among them.

    .venv/bin/python bench/dns.py [--domains 200] [--rounds 3] [--timeout 3.0]
"""
from __future__ import annotations

import argparse
import multiprocessing
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Python puts this script's folder first on the path, where this file would stand in for
# dnspython's `dns` package: the repository root takes its place.
sys.path[0] = str(ROOT)

from config import Config  # noqa: E402
from dnscheck import jobs  # noqa: E402
from store import open_db  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.models import Domain, Organization  # noqa: E402
from tests.dns_server import DNSServer  # noqa: E402
from tests.dnscheck.zones import REPORT_ADDRESS, REPORT_ZONE, record_lines  # noqa: E402

PROVIDER = ("provider.test", 'spf IN TXT "v=spf1 include:spf2.provider.test ~all"\n'
                             'spf2 IN TXT "v=spf1 ip4:198.51.100.0/24 ip4:203.0.113.0/24 ~all"\n')
SILENT = "silent.bench.test"
BIMI = 'default._bimi IN TXT "v=BIMI1; l=https://logo.example/l.svg"\n'


def serve(conn, names: list[str]) -> None:
    """The DNS server's own process (not sharing the checker's interpreter lock, as a real
    nameserver would not): zones, then the port, then question counts on request."""
    server = DNSServer().start()
    server.zone(*REPORT_ZONE)
    server.zone(*PROVIDER)
    for number, name in enumerate(names):
        bimi = BIMI if number % 4 == 0 else ""
        server.zone(name, record_lines(spf="v=spf1 mx include:spf.provider.test -all", extra=bimi))
    server.fault(SILENT, "silent")
    conn.send(server.port)
    while conn.recv() == "asked":
        conn.send(len(server.queries))
    server.stop()


def target(org_name: str, names: list[str]) -> str:
    org = Organization.create(name=org_name)
    Domain.insert_many([{"org": org.id, "name": n, "dkim_selectors": ["s1"]}
                        for n in names]).execute()
    return org.id


def questions(conn) -> int:
    conn.send("asked")
    return conn.recv()


def one_round(config, org_id: str) -> tuple[float, int, int, int]:
    started = time.perf_counter()
    result = jobs.check_stored(config, org_id=org_id)
    seconds = time.perf_counter() - started
    unknown = sum(1 for c in result.checks if c.dns["dmarc"]["status"] == "unknown")
    return seconds, len(result.checks), unknown, len(result.failed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domains", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=3.0, help="RUA_DNS_TIMEOUT (default 3)")
    args = parser.parse_args()
    answering = [f"d{n:03d}.bench.test" for n in range(args.domains)]
    with_silent = answering[:-1] + [SILENT]
    conn, child_end = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, args=(child_end, answering + [SILENT]))
    server.start()
    port = conn.recv()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/rua.db"
        config = Config(database_url=url, dns_nameservers="127.0.0.1", dns_port=port,
                        dns_timeout=args.timeout, report_address=REPORT_ADDRESS,
                        dkim_selectors="default,google,selector1,selector2,k1,s1,s2,dkim,mail",
                        lock_dir=folder)
        database = open_db(url)
        with database.connection_context():
            migrate(database)
            targets = {"all answer": target("all", answering),
                       "one silent": target("silent", with_silent)}
            times = {name: [] for name in targets}
            print(f"{args.domains} domains a target, RUA_DNS_TIMEOUT={args.timeout:g} s, "
                  f"{jobs.DOMAIN_BOUND} domains at once")
            for number in range(args.rounds):
                order = list(targets.items())
                for name, org_id in (order if number % 2 == 0 else order[::-1]):
                    asked = questions(conn)
                    seconds, checked, unknown, failed = one_round(config, org_id)
                    times[name].append(seconds)
                    print(f"round {number + 1} {name:<10} {seconds:6.2f} s  {checked} checked, "
                          f"{unknown} DMARC unknown, {failed} failed, "
                          f"{questions(conn) - asked} questions to the server")
    conn.send("stop")
    server.join(timeout=10)
    for name, values in times.items():
        print(f"{name:<10} median {statistics.median(values):.2f} s "
              f"(min {min(values):.2f}, max {max(values):.2f}); goal < 10 s")


if __name__ == "__main__":
    main()
