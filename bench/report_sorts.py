"""GET /reports' sorts and filters on a provider's Postgres store: one organization of 50,000
reports among others, one client in process (Flask's test client: no network, no gunicorn).

The store is generated straight into its tables (a scratch database: its tables are dropped
first; a store this bench made with the same sizes is reused): --reports for the measured
organization (25 domains, 5 reporters a domain and day, so 50,000 reports are 400 days), and
--orgs others of --other-reports each over their last days, every day's reports of all
organizations inserted together, as a provider's ingest writes them. The reporters and report
ids are shaped as demo/'s; totals are lognormal, four reports in ten wholly compliant. Each query is asked in interleaved rounds (every query once a
round, in a shuffled order) with its total remembered, as a client paging meets it; printed are
each query's server time p50/p95 and, from EXPLAIN ANALYZE of its page's statement (and of its
count, where the count is not a sum of DomainDay), the indexes the plan reads and Postgres's
execution time p50.

--compare alternates rounds with the report indexes Postgres had before migration 24 (those
store/migrations.py REPORT_INDEXES keeps on SQLite only, created again; the two no query read
are left out), so each query's time with and without them comes from the same run; the
queries are this tree's in both (a sort by domain breaks its ties by date_end).

Run: .venv/bin/python bench/report_sorts.py --database-url postgresql://USER@HOST/SCRATCH_DB
         [--reports 50000] [--orgs 20] [--other-reports 10000] [--rounds 15] [--compare]
"""
from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import replace
import hashlib
import itertools
import os
import pathlib
import random
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import Config  # noqa: E402
from store import db, open_db  # noqa: E402
from store.clock import utcnow  # noqa: E402
from store.ids import encode  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.models import DomainDay, Organization, Report  # noqa: E402

TARGET = "report-sorts"
DOMAINS, REPORTERS_A_DAY = 25, 5
LAST_DAY = dt.date(2026, 11, 1)
QUERIES = {
    "default (date_end desc)": "/reports?limit=50",
    "date_end asc": "/reports?sort_dir=asc",
    "received desc": "/reports?sort_by=received",
    "received asc": "/reports?sort_by=received&sort_dir=asc",
    "org_name asc": "/reports?sort_by=org_name&sort_dir=asc",
    "org_name desc": "/reports?sort_by=org_name",
    "domain asc": "/reports?sort_by=domain&sort_dir=asc",
    "domain desc": "/reports?sort_by=domain",
    "total_messages desc": "/reports?sort_by=total_messages",
    "total_messages asc": "/reports?sort_by=total_messages&sort_dir=asc",
    "report_id asc": "/reports?sort_by=report_id&sort_dir=asc",
    "report_id desc": "/reports?sort_by=report_id",
    "compliance asc": "/reports?sort_by=compliance&sort_dir=asc",
    "compliance desc": "/reports?sort_by=compliance",
    "default, page 100": "/reports?offset=4950",
    "total_messages, page 100": "/reports?sort_by=total_messages&offset=4950",
    "domain filter (default order)": "/reports?domain=d3.",
    "domain filter by total_messages": "/reports?domain=d3.&sort_by=total_messages",
    "domain filter, failing by compliance": ("/reports?domain=d3.&result=fail"
                                             "&sort_by=compliance&sort_dir=asc"),
    "result=fail": "/reports?result=fail",
    "result=pass by compliance": "/reports?result=pass&sort_by=compliance",
    "from (last 7 days)": "/reports?from={week}",
    "to (a year ago)": "/reports?to={year}",
    "from..to (one day)": "/reports?from={day}&to={day}",
    "org filter": "/reports?org=yahoo",
    "search": "/reports?search=comcast",
    "date-range": "/reports/date-range",
}
# (org_name, report id maker) as demo/reports.py's reporters write them.
REPORTERS = (
    ("google.com", lambda rng, sent, domain: str(rng.randrange(10**18, 10**20))),
    ("Outlook.com", lambda rng, sent, domain: f"{rng.getrandbits(128):032x}"),
    ("Enterprise Outlook", lambda rng, sent, domain: f"{rng.getrandbits(128):032x}"),
    ("Yahoo", lambda rng, sent, domain: f"{sent}.{rng.randrange(10**6):06d}"),
    ("Mail.Ru", lambda rng, sent, domain: str(rng.randrange(10**28, 10**29))),
    ("comcast.net", lambda rng, sent, domain: f"v2-{sent}-{domain}"),
    ("Fjordnett", lambda rng, sent, domain: f"{rng.getrandbits(64):016x}.{sent}@fjordnett.example"),
)


def _epoch(day: dt.date) -> int:
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp())


def day_rows(rng: random.Random, org_id: str, number: int, day: dt.date):
    """One organization's reports of one day: each domain's from its five reporters."""
    begin = _epoch(day)
    rows = []
    for d in range(DOMAINS):
        domain = f"d{d}.org{number}.example"
        for k in rng.sample(range(len(REPORTERS)), REPORTERS_A_DAY):
            org_name, report_id = REPORTERS[k]
            sent = begin + 86400 + rng.randrange(3600, 30000)
            total = max(1, int(rng.lognormvariate(4, 1.5)))
            compliant = total if rng.random() < 0.4 else int(total * rng.random())
            received = dt.datetime.fromtimestamp(sent, dt.timezone.utc).replace(tzinfo=None)
            rows.append(dict(
                id=encode((sent * 1000 << 80) | rng.getrandbits(80), 26), org=org_id,
                dedupe_key=hashlib.sha256(f"{org_id}{domain}{k}{begin}".encode()).hexdigest(),
                org_name=org_name, email=f"dmarc@{org_name.lower().replace(' ', '')}",
                report_id=report_id(rng, sent, domain), date_begin=begin,
                date_end=begin + 86400, day_begin=day, day_end=day, domain=domain, p="reject",
                total_messages=total, compliant_messages=compliant,
                compliance_rate=round(100.0 * compliant / total, 2),
                record_count=rng.randint(1, 12), received_at=received,
                failure_summary={"spf_only": 0, "dkim_only": 0, "both": 0, "total": 1}))
    return rows


def fill(database, reports: int, orgs: int, other_reports: int) -> str:
    """Build the store (or reuse the one built with these sizes); the measured org's id."""
    from peewee import DatabaseError
    name = f"{TARGET}-{reports}-{orgs}x{other_reports}"
    try:
        with database.connection_context():
            found = Organization.get_or_none(Organization.name == name)
            if found is not None:
                print(f"reusing the store of {name}")
                migrate(database)
                return found.id
    except DatabaseError:                   # not a store yet
        pass
    started = time.perf_counter()
    per_day = DOMAINS * REPORTERS_A_DAY
    with database.connection_context():
        database.execute_sql("DROP SCHEMA public CASCADE")
        database.execute_sql("CREATE SCHEMA public")
        migrate(database)
        target = Organization.create(name=name, plan="unlimited")
        others = [Organization.create(name=f"{TARGET}-other-{n}", plan="unlimited")
                  for n in range(orgs)]
    rng = random.Random(1)
    days = reports // per_day
    other_days = other_reports // per_day
    for offset in range(days, 0, -1):
        day = LAST_DAY - dt.timedelta(days=offset)
        rows = day_rows(rng, target.id, 0, day)
        if offset <= other_days:
            for number, org in enumerate(others, 1):
                rows += day_rows(rng, org.id, number, day)
        rng.shuffle(rows)                   # the day's reports arrive in no order
        with database.connection_context(), database.atomic():
            for start in range(0, len(rows), 1000):
                Report.insert_many(rows[start:start + 1000]).execute()
            DomainDay.insert_many(_domain_days(rows, day)).execute()
    with database.connection_context():
        database.execute_sql("VACUUM ANALYZE")
    print(f"stored {days * per_day:,} reports for the measured organization and "
          f"{orgs} x {other_days * per_day:,} for the others in "
          f"{time.perf_counter() - started:.0f} s")
    return target.id


def _domain_days(rows, day: dt.date) -> list[dict]:
    days: dict[tuple, dict] = {}
    for row in rows:
        key = (row["org"], row["domain"])
        entry = days.setdefault(key, dict(org=row["org"], domain=row["domain"], day=day,
                                          reports=0, messages=0, policy_p="reject"))
        entry["reports"] += 1
        entry["messages"] += row["total_messages"]
    return list(days.values())


def main_only() -> dict:
    """The report indexes main had on Postgres that migration 24 dropped there."""
    from store.migrations import REPORT_INDEXES
    kept = REPORT_INDEXES["postgres"]
    return {name: made for name, made in REPORT_INDEXES["sqlite"].items() if name not in kept}


def with_main_indexes(database, wanted: bool) -> None:
    """Create main's dropped report indexes (wanted) or drop them again; then ANALYZE."""
    from store.migrations import create_indexes
    extra = main_only()
    with database.connection_context():
        if wanted:
            create_indexes(database, extra)
        else:
            for name in extra:
                database.execute_sql(f'DROP INDEX IF EXISTS "{name}"')
        database.execute_sql('ANALYZE "report"')


def explained(database, org_id: str, path: str) -> list[tuple[str, set, float]]:
    """(statement, indexes read, execution ms) for the page and, unless it is a sum of
    DomainDay, the count of the report list at path."""
    from urllib.parse import parse_qs, urlsplit

    from werkzeug.datastructures import MultiDict

    from store import report_queries as queries
    from webapp.reports import report_filter
    parts = urlsplit(path)
    if parts.path != "/reports":
        return []
    args = MultiDict([(k, v) for k, vs in parse_qs(parts.query).items() for v in vs])
    wanted = report_filter(args)
    if wanted.domain:
        wanted = replace(wanted, domains=queries.matching_domains(org_id, wanted.domain))
    limit, offset = int(args.get("limit", 50)), int(args.get("offset", 0))
    statements = [("page", queries.report_page(org_id, wanted).limit(limit).offset(offset))]
    if not wanted.by_domain_only:
        counted = Report.select(Report.id).where(queries._report_conditions(org_id, wanted))
        statements.append(("count", counted))
    found = []
    for label, query in statements:
        sql, params = query.sql()
        if label == "count":
            sql = f"SELECT COUNT(1) FROM ({sql}) AS counted"
        top = database.execute_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + sql,
                                   params).fetchone()[0][0]
        found.append((label, set(_indexes(top["Plan"])), top["Execution Time"]))
    return found


def _indexes(node):
    if "Index Name" in node:
        yield node["Index Name"]
    for child in node.get("Plans", ()):
        yield from _indexes(child)


def measure(url: str, org_id: str, rounds: int, compare: bool) -> None:
    from store.ids import new_ulid
    from tests.factories import make_key, make_member
    from webapp import create_app
    database = open_db(url)
    config = Config(database_url=url, offline=True, lock_dir=str(ROOT / "bench" / "out"))
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    with database.connection_context():
        org = Organization.get_by_id(org_id)
        member = make_member(org, email=f"bench-{new_ulid()}@example.com")
        key = make_key(org, scope="read", member=member)[1]
        latest = database.execute_sql('SELECT MAX(day_end) FROM "report" WHERE org_id = %s',
                                      (org_id,)).fetchone()[0]
    days = {"week": latest - dt.timedelta(days=6), "year": latest - dt.timedelta(days=365),
            "day": latest - dt.timedelta(days=30)}
    paths = {label: "/api/v1" + path.format(**days) for label, path in QUERIES.items()}
    ticks = itertools.count()
    first = utcnow()
    # One second a request: the abuse window (50 requests in 10 s per key) never closes.
    client = create_app(config, clock=lambda: first + dt.timedelta(seconds=next(ticks))).test_client()
    database = db.obj                   # the app opened its own
    headers = {"Authorization": f"Bearer {key}"}
    variants = ["migrated", "main's indexes"] if compare else ["migrated"]
    times = {(label, v): [] for label in QUERIES for v in variants}
    postgres = {(label, v): {} for label in QUERIES for v in variants}
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {rounds} rounds")
    for number in range(rounds):
        for variant in (variants if number % 2 == 0 else variants[::-1]):
            if compare:
                with_main_indexes(database, variant != "migrated")
            order = list(paths.items())
            random.shuffle(order)
            for label, path in order:
                started = time.perf_counter()
                response = client.get(path, headers=headers)
                elapsed = (time.perf_counter() - started) * 1000
                assert response.status_code == 200, (path, response.get_data(as_text=True)[:300])
                if number == 0:
                    continue                  # the warm-up round
                times[(label, variant)].append(elapsed)
                with database.connection_context():
                    for statement, indexes, ms in explained(database, org_id, path[len("/api/v1"):]):
                        seen = postgres[(label, variant)].setdefault(statement, (set(), []))
                        seen[0].update(indexes)
                        seen[1].append(ms)
    if compare:
        with_main_indexes(database, False)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    for variant in variants:
        print(f"\n{variant}: server time p50 / p95 ms; Postgres execution p50 ms "
              "[indexes read] of the page and the count")
        for label in QUERIES:
            values = sorted(times[(label, variant)])
            p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
            plans = "; ".join(
                f"{statement} {statistics.median(ms):6.2f} [{', '.join(sorted(ix)) or 'no index'}]"
                for statement, (ix, ms) in postgres[(label, variant)].items())
            print(f"  {label:<40} {statistics.median(values):7.1f} / {p95:6.1f}   {plans}")
    if compare:
        print("\nratio of p50 server time, migrated / main's indexes:")
        for label in QUERIES:
            new = statistics.median(times[(label, "migrated")])
            old = statistics.median(times[(label, "main's indexes")])
            print(f"  {label:<40} {new / old:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True,
                        help="a scratch Postgres database (its tables are dropped)")
    parser.add_argument("--reports", type=int, default=50_000,
                        help="reports of the measured organization (default 50,000)")
    parser.add_argument("--orgs", type=int, default=20, help="other organizations (default 20)")
    parser.add_argument("--other-reports", type=int, default=10_000,
                        help="reports of each other organization (default 10,000)")
    parser.add_argument("--rounds", type=int, default=15,
                        help="rounds, the first a warm-up, so at least 2 (default 15)")
    parser.add_argument("--compare", action="store_true",
                        help="alternate rounds with main's report indexes created again")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2: the first round is a warm-up")
    database = open_db(args.database_url)
    org_id = fill(database, args.reports, args.orgs, args.other_reports)
    measure(args.database_url, org_id, args.rounds, args.compare)


if __name__ == "__main__":
    main()
