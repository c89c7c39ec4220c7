"""The whole enrichment job on new sources: `sources.jobs.refresh` (enrich, then each source's
row, verdict, events and records written) against the test suite's DNS server, beside the
enrichment alone on the same IPs (prints figures; asserts nothing).

The DNS world is bench/sources_enrich.py's (reverse zones of 198.18.0.0/15, a forward zone, the
default DNSBL zones); the store is a SQLite file holding one organization whose sources were
ingested from one generated report (one record per IP, a third failing DMARC). Rounds
alternate the two targets; each refresh starts from sources never enriched.
Goal: 5,000 new IPs in under 60 s on this 2-CPU machine.

    .venv/bin/python bench/sources_refresh.py [--ips 5000] [--rounds 2]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)        # bench/dns.py must not stand in for dnspython's `dns`

from bench.sources_enrich import addresses, enriched, serve  # noqa: E402
from config import Config  # noqa: E402
from sources import dnsbl, geo, jobs  # noqa: E402
from sources.enrich import DEFAULT_BOUND  # noqa: E402
from store import open_db  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.models import Source  # noqa: E402
from tests.dns_server import DNSServer  # noqa: E402
from tests.factories import make_org, make_report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ips", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    server = DNSServer().start()
    folder = tempfile.mkdtemp(prefix="rua-bench-refresh-")
    config = Config(database_url=f"sqlite:///{folder}/rua.db", lock_dir=folder,
                    dns_nameservers="127.0.0.1", dns_port=server.port, dns_timeout=3.0)
    ips = addresses(args.ips)
    serve(server, ips, dnsbl.zones(config.dnsbl_zones))
    geo.database(config.geoip_db)            # loaded once per process, as the scheduler does
    database = open_db(config.database_url)
    try:
        with database.connection_context():
            migrate(database)
            org = make_org("bench-refresh")
            failing = {"dkim": "fail", "spf": "fail", "auth_dkim": None, "auth_spf": None}
            make_report(org, records=[{"source_ip": ip, "count": 1 + n % 7,
                                       **(failing if n % 3 == 0 else {})}
                                      for n, ip in enumerate(ips)])
            for round_ in range(args.rounds):
                order = ("refresh", "enrich") if round_ % 2 == 0 else ("enrich", "refresh")
                for target in order:
                    if target == "enrich":
                        seconds, facts = enriched(config, ips, DEFAULT_BOUND)
                        print(f"round {round_ + 1}: enrich alone {seconds:.1f} s {facts}")
                        continue
                    Source.update(enriched_at=None).execute()
                    started = time.perf_counter()
                    done = jobs.refresh(config)
                    seconds = time.perf_counter() - started
                    print(f"round {round_ + 1}: refresh {seconds:.1f} s: {done.sources} "
                          f"sources, {done.reclassified} records reclassified")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
