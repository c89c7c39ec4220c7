"""The live DNS check against a resolver that answers nothing at all (prints figures).

The resolver is the test suite's DNS server (tests/dns_server.py) on 127.0.0.1 with every name
silent, as an air-gapped host's or a firewalled one's would be. One domain is the baseline;
then 48 domains (dnscheck.jobs.check_unstored: look-ups and verdicts, nothing stored), in
alternating rounds with a fresh resolver each. Goal: 48 domains in a few seconds, close to one
domain's time, since the dead resolver is found out once.

    .venv/bin/python bench/dns_dead_resolver.py [--domains 48] [--rounds 3] [--timeout 3.0]
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# This script's folder first on the path would let this file stand in for dnspython's `dns`.
sys.path[0] = str(ROOT)

from config import Config  # noqa: E402
from dnscheck import jobs  # noqa: E402
from tests.dns_server import DNSServer  # noqa: E402


def timed(config, names: list[str]) -> tuple[float, str]:
    started = time.monotonic()
    run = jobs.check_unstored(config, names)
    return time.monotonic() - started, run.unanswered


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domains", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args()
    server = DNSServer().start()
    server.fault(".", "silent")
    config = Config(dns_nameservers="127.0.0.1", dns_port=server.port, dns_timeout=args.timeout)
    names = [f"d{n:03}.example" for n in range(args.domains)]
    one, many = [], []
    try:
        for _ in range(args.rounds):
            seconds, why = timed(config, names[:1])
            one.append(seconds)
            seconds, why = timed(config, names)
            many.append(seconds)
    finally:
        server.stop()
    print(f"resolver: {why or 'answered'}; RUA_DNS_TIMEOUT={args.timeout}")
    print(f"1 domain:  median {statistics.median(one):.2f} s  (rounds {', '.join(f'{s:.2f}' for s in one)})")
    print(f"{args.domains} domains: median {statistics.median(many):.2f} s  "
          f"(rounds {', '.join(f'{s:.2f}' for s in many)})")
    print(f"ratio {args.domains}/1: {statistics.median(many) / statistics.median(one):.2f}")


if __name__ == "__main__":
    main()
