"""GET /sources on an organization with 100,000 distinct sending IPs, one client, in process.

The store is generated straight into its tables (Source and SourceDomain rows as ingest keeps
them, a third of the sources recognised, some listed), then the whole app (authentication,
metering, the blueprint, JSON) answers through Flask's test client: no network, no gunicorn,
so the figure is the server's own time per request. Queries are measured in interleaved rounds
(each round asks every query in a shuffled order) and the p50/p95 over all rounds printed,
with the filter's total remembered (as a client paging through it meets it) and counted anew.
Goal: p50 under 25 ms for the default sort, a filter and a search.

With --provider URL it measures instead a provider's store over HTTP: the Postgres database
bench/ingest_provider.py filled (200 organizations x 25 domains, a day's load, left as it was),
served by gunicorn under deploy/gunicorn.conf.py and loaded by wrk as bench/api.py does, with 10
keys per organization rotating: /sources (default sort), its other sorts and filters, and
/reports?limit=50 beside them as the other routes' baseline. Goal: /sources at least 1,000
requests/s with p99 under 50 ms at 16 connections.

Run: .venv/bin/python bench/sources.py [--ips 100000] [--rounds 20] [--database-url URL]
     .venv/bin/python bench/sources.py --provider URL [--duration 10] [--connections 16]
"""
from __future__ import annotations

import argparse
import itertools
import os
import pathlib
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import Config  # noqa: E402
from store import db, open_db  # noqa: E402
from store.addresses import ip_key, search_text  # noqa: E402
from store.clock import utcnow  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.models import Source, SourceDomain  # noqa: E402

QUERIES = {
    "default sort": "/sources",
    "filter reputation=malicious": "/sources?reputation=malicious",
    "filter has_failures=true, by auth_failures": "/sources?has_failures=true&sort_by=auth_failures",
    "filter domain": "/sources?domain=d3.example",
    "search service name": "/sources?search=mailgun",
    "search IP prefix": "/sources?search=10.1.2",
    "sort source_ip asc, page 100": "/sources?sort_by=source_ip&sort_dir=asc&offset=5000",
}
SERVICES = [("Mailgun", "mailgun"), ("Google", "google"), ("SendGrid", "sendgrid"), (None, None),
            (None, None), (None, None)]
STATUSES = ["clean"] * 6 + ["unknown"] * 3 + ["suspicious", "malicious"]


def generate(org_id: str, count: int, domains: int = 20) -> None:
    rng = random.Random(7)
    start = datetime(2026, 1, 1)
    sources, per_domain = [], []
    for n in range(count):
        ip = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}" if n % 10 else f"2001:db8::{n:x}"
        messages = int(rng.paretovariate(1.2) * 3)
        compliant = rng.randint(0, messages)
        spf_fail, dkim_fail = rng.randint(0, messages), rng.randint(0, messages)
        first = start + timedelta(minutes=rng.randint(0, 400_000))
        last = first + timedelta(minutes=rng.randint(0, 40_000))
        name, slug = SERVICES[n % len(SERVICES)]
        sent_for = rng.sample(range(domains), rng.choice((1, 1, 1, 2, 3)))
        sources.append(dict(
            org=org_id, ip=ip, ip_key=ip_key(ip), first_seen=first, last_seen=last,
            messages=messages, compliant=compliant, spf_fail=spf_fail, dkim_fail=dkim_fail,
            auth_failures=spf_fail + dkim_fail, forwarded=0,
            compliance_rate=100.0 * compliant / messages if messages else 0.0,
            domain_count=len(sent_for), service_name=name, service_slug=slug, service_icon=slug,
            abuse_status=rng.choice(STATUSES), fcrdns="pass" if slug else "none",
            classification="unknown", authorized=False, country="NL", enriched_at=last,
            search_text=search_text(ip, [f"d{d}.example" for d in sent_for],
                                    f"mx{n}.{slug}.example" if slug else None, name)))
        for d in sent_for:
            per_domain.append(dict(
                org=org_id, domain=f"d{d}.example", ip=ip, first_seen=first, last_seen=last,
                messages=messages, compliant=compliant, spf_fail=spf_fail, dkim_fail=dkim_fail,
                forwarded=0, quarantined=0, rejected=0, reports=1))
    with db.atomic():
        for model, rows in ((Source, sources), (SourceDomain, per_domain)):
            fields = [model._meta.fields[name] for name in rows[0]]
            values = [tuple(row.values()) for row in rows]
            for i in range(0, len(values), 2000):
                model.insert_many(values[i:i + 2000], fields=fields).execute()


PROVIDER_TARGETS = {
    "/reports?limit=50 (baseline)": ["/reports?limit=50"],
    "/sources": ["/sources"],
    "/sources, other sorts and filters": [
        "/sources?sort_by=compliance&sort_dir=asc", "/sources?sort_by=last_seen",
        "/sources?sort_by=auth_failures", "/sources?has_failures=true",
        "/sources?reputation=unknown", "/sources?search=d1.", "/sources?sort_by=source_ip"],
}


def provider_keys(url: str, per_org: int = 10) -> list[str]:
    """per_org read keys of every organization of the store, made now."""
    from store.models import Organization
    from tests.factories import make_key, make_member
    database = open_db(url)
    run = int(time.time())
    with database.connection_context():
        members = [make_member(org, email=f"bench-{run}@example.com")
                   for org in Organization.select()]
        keys = [make_key(member.org, member=member)[1]
                for member in members for _ in range(per_org)]
    database.close_all()
    random.Random(5).shuffle(keys)
    return keys


def provider(url: str, duration: int, connections: int) -> None:
    """wrk against gunicorn on a provider's store; prints req/s, p50 and p99 per target."""
    from bench.api import OUT, Gunicorn, check_answers, ensure_wrk, run_wrk
    OUT.mkdir(parents=True, exist_ok=True)            # gunicorn's lock folder
    wrk, keys = ensure_wrk(), provider_keys(url)
    print(f"{len(keys):,} keys; wrk -t2 -c{connections} -d{duration}s against gunicorn "
          f"(deploy/gunicorn.conf.py), load average {os.getloadavg()[0]:.1f}")
    print(f"  {'target':<40} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for label, paths in PROVIDER_TARGETS.items():
        paths = ["/api/v1" + path for path in paths]
        with Gunicorn("wsgi:app", url) as server:
            check_answers(server.url, paths, keys[0])
            run_wrk(wrk, server.url, paths, keys, 2, connections, 2)       # warm-up
            f = run_wrk(wrk, server.url, paths, keys, duration, connections, 2)
        print(f"  {label:<40} {f['rps']:>8,.0f} {f['p50_us'] / 1000:>8.2f} "
              f"{f['p99_us'] / 1000:>8.2f} {f['non2xx'] + f['errors']:>8}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ips", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--provider", default="",
                        help="a Postgres database bench/ingest_provider.py filled: measure "
                             "/sources over HTTP there instead")
    parser.add_argument("--duration", type=int, default=10, help="--provider: seconds a target")
    parser.add_argument("--connections", type=int, default=16, help="--provider: wrk's")
    args = parser.parse_args()
    if args.provider:
        provider(args.provider, args.duration, args.connections)
        return
    folder = tempfile.mkdtemp(prefix="rua-bench-sources-")
    url = args.database_url or f"sqlite:///{folder}/rua.db"
    config = Config(database_url=url, lock_dir=folder, offline=True)
    database = open_db(url)
    from tests.factories import make_key, make_org
    from webapp import create_app
    with database.connection_context():
        migrate(database)
        org = make_org(name=f"bench-sources-{int(time.time())}", plan="unlimited")
        key = make_key(org, scope="read", role="owner")[1]
        started = time.perf_counter()
        generate(org.id, args.ips)
        print(f"generated {args.ips:,} sources in {time.perf_counter() - started:.1f} s ({url})")
    ticks = itertools.count()
    first = utcnow()

    def new_app():
        # One second a request: the abuse window (50 requests in 10 s per key) never closes.
        return create_app(config, clock=lambda: first + timedelta(seconds=next(ticks)))
    client = new_app().test_client()
    headers = {"Authorization": f"Bearer {key}"}
    for label, path in QUERIES.items():             # warm-up, and the answers are checked
        response = client.get("/api/v1" + path, headers=headers)
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:300])
        body = response.get_json()
        print(f"  {label:<44} total {body['total']:>7,}  rows {len(body['sources'])}")
    # "remembered": the app that answered before (a filter's total is kept until a report or
    # an enrichment); "computed": a new app per request, so the total is counted again.
    times = {(label, mode): [] for label in QUERIES for mode in ("remembered", "computed")}
    for _ in range(args.rounds):
        order = [(label, path, mode) for label, path in QUERIES.items()
                 for mode in ("remembered", "computed")]
        random.shuffle(order)
        for label, path, mode in order:
            answering = client if mode == "remembered" else new_app().test_client()
            started = time.perf_counter()
            response = answering.get("/api/v1" + path, headers=headers)
            times[(label, mode)].append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
    print(f"{args.rounds} interleaved rounds, one client, in process (Flask test client), "
          "p50 / p95 in ms:")
    print(f"  {'':<44} {'total remembered':>18} {'total computed':>18}")
    for label in QUERIES:
        cells = []
        for mode in ("remembered", "computed"):
            values = sorted(times[(label, mode)])
            p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
            cells.append(f"{statistics.median(values):7.1f} / {p95:6.1f}")
        print(f"  {label:<44} {cells[0]:>18} {cells[1]:>18}")

if __name__ == "__main__":
    main()
