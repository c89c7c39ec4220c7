"""Enriching new sending IPs against a local DNS server (prints figures; asserts nothing).

The server is the test suite's (tests/dns_server.py) on 127.0.0.1, serving one reverse zone
per /24 of 198.18.0.0/15 (RFC 2544's benchmark range), a forward zone, and the default
RUA_DNSBL_ZONES (each with its RFC 5782 test entries and one listed IP in a hundred). Of the
IPs, 6 in 10 have a PTR name that confirms, 2 in 10 one that resolves elsewhere, 2 in 10 none.
Two targets in alternating rounds, each with a fresh resolver (nothing cached):
- "floor": the same DNS questions enrichment asks (PTR, A of the name, each zone), asked
  through one Lookup with the same bound and nothing else: what the server and resolver cost.
- "enrich": sources.enrich.enrich on the same IPs (self-test, FCrDNS, service map, geo,
  DNSBL, reputation). Goal: 5,000 new IPs in under 60 s on this 2-CPU machine.

    .venv/bin/python bench/sources_enrich.py [--ips 5000] [--rounds 2] [--bound 32]
"""
from __future__ import annotations

import argparse
import ipaddress
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Python puts this script's folder first on the path, where bench/dns.py would stand in for
# dnspython's `dns` package: the repository root takes its place.
sys.path[0] = str(ROOT)

from config import Config  # noqa: E402
from dnscheck.resolver import Lookup, gather  # noqa: E402
from sources import dnsbl, identity  # noqa: E402
from sources.enrich import enrich  # noqa: E402
from tests.dns_server import DNSServer  # noqa: E402
from tests.sources.zones import dnsbl_lines, ptr_lines  # noqa: E402

NETWORK = ipaddress.ip_network("198.18.0.0/15")
FORWARD = "senders.bench.test"


def addresses(count: int) -> list[str]:
    hosts = NETWORK.hosts()
    return [str(next(hosts)) for _ in range(count)]


def serve(server: DNSServer, ips: list[str], zones: list[str]) -> None:
    by_24: dict[str, dict[str, str]] = {}
    forward = []
    for n, ip in enumerate(ips):
        origin = ipaddress.ip_address(ip).reverse_pointer.split(".", 1)[1]
        if n % 10 < 6:
            by_24.setdefault(origin, {})[ip] = f"h{n}.{FORWARD}"
            forward.append(f"h{n} IN A {ip}")
        elif n % 10 < 8:
            by_24.setdefault(origin, {})[ip] = f"h{n}.{FORWARD}"
            forward.append(f"h{n} IN A 192.0.2.1")
        else:
            by_24.setdefault(origin, {})
    for origin, names in by_24.items():
        server.zone(origin, ptr_lines(origin, names) if names else "")
    server.zone(FORWARD, "\n".join(forward) + "\n")
    listed = {ip: "127.0.0.2" for ip in ips[::100]}
    for zone in zones:
        server.zone(zone, dnsbl_lines(listed))


def floor(config: Config, ips: list[str], zones: list[str], bound: int) -> float:
    """The same questions, asked with the same bound, through a fresh Lookup."""
    lookup = Lookup(config)
    started = time.perf_counter()
    tests = dnsbl.self_test(lookup, zones)

    def ask(ip: str):
        ptr = lookup.query(identity.reverse_name(ip), "PTR")
        for name in identity.ptr_names(ptr):
            lookup.query(name, "A")
        dnsbl.check(lookup, ip, tests)
    gather({ip: (lambda ip=ip: ask(ip)) for ip in ips}, bound)
    return time.perf_counter() - started


def enriched(config: Config, ips: list[str], bound: int) -> tuple[float, dict]:
    started = time.perf_counter()
    run = enrich(config, ips, bound=bound)
    seconds = time.perf_counter() - started
    fcrdns: dict[str, int] = {}
    for result in run.results.values():
        fcrdns[result.identity.fcrdns] = fcrdns.get(result.identity.fcrdns, 0) + 1
    listed = sum(1 for r in run.results.values() if r.reputation.blocklist["status"] == "listed")
    return seconds, {"fcrdns": fcrdns, "listed": listed, "dropped": len(run.dropped)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ips", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bound", type=int, default=32)
    args = parser.parse_args()
    server = DNSServer().start()
    config = Config(dns_nameservers="127.0.0.1", dns_port=server.port, dns_timeout=3.0)
    zones = dnsbl.zones(config.dnsbl_zones)
    ips = addresses(args.ips)
    serve(server, ips, zones)
    from sources import geo
    geo.database(config.geoip_db)          # loaded once per process, as a long-running job does
    floors, runs = [], []
    try:
        for round_ in range(args.rounds):
            order = ("floor", "enrich") if round_ % 2 == 0 else ("enrich", "floor")
            for target in order:
                server.queries.clear()
                if target == "floor":
                    floors.append(floor(config, ips, zones, args.bound))
                else:
                    seconds, facts = enriched(config, ips, args.bound)
                    runs.append(seconds)
                    print(f"round {round_ + 1}: enrich {seconds:.1f} s, "
                          f"{len(server.queries)} questions, {facts}")
            print(f"round {round_ + 1}: floor {floors[-1]:.1f} s, "
                  f"enrich/floor {runs[-1] / floors[-1]:.2f}")
    finally:
        server.stop()
    print(f"{args.ips} new IPs, bound {args.bound}, {args.rounds} rounds: enrich median "
          f"{statistics.median(runs):.1f} s ({args.ips / statistics.median(runs):.0f} IPs/s; "
          f"goal < 60 s), floor median {statistics.median(floors):.1f} s, ratio "
          f"{statistics.median(r / f for r, f in zip(runs, floors)):.2f}")


if __name__ == "__main__":
    main()
