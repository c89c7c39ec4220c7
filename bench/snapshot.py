"""How long snapshot refreshes take and how fast snapshots are served (prints figures).

A generated organization: 1,000,000 records over the 365 days before today, 50 domains (volume
skewed towards the first ones), 5,000 source IPs (100 per domain, 198.18.0.0/15, picked by rank
with Zipf weights: a couple of big senders and a long tail), a few failing ones per domain,
1 in 5 IPs a recognised sending service. The store holds exactly the DailyRollup, DomainDay,
Domain and Source rows that ingesting those records writes (the refresh reads nothing else);
Report and Record rows are left out to keep the build short. Each refresh is measured
--repeat times (best and median: the machine may be shared).

Measured: a full refresh (first run: every day summed, a year of history back-filled), a
refresh with nothing changed, a refresh after one more day of reports stored through the real
ingest.storing.store_report, the snapshot bytes; then /dashboard/overview and
/domains/{domain}/health under deploy/gunicorn.conf.py with wrk, against the bare WSGI ceiling
and /enums (the same key look-up and metering, no snapshot), in interleaved rounds with every
server up at once (bench/interleave.py). Goals: full < 5 s, incremental < 0.5 s; the snapshot
endpoints at 0.5 of the ceiling or more.

--domains N adds N subdomains with a report each (what a stranger's reports add) and measures
instead, each in its own process: the snapshotter's refresh of the whole organization, then
the next stale health and overview requests, which compute only their one body
(bench/snapshot_scale.py; goal: health under 100 ms).

    .venv/bin/python bench/snapshot.py [--records N] [--repeat N] [--rounds N] [--duration S]
                                       [--no-http] [--domains N]
"""
from __future__ import annotations

import argparse
import math
import os
import pathlib
import random
import shutil
import statistics
import sqlite3
import sys
import time
from datetime import datetime, timedelta, timezone
from itertools import accumulate

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.api import OUT, ensure_wrk  # noqa: E402
from bench.interleave import Target, measure, report  # noqa: E402
from bench import snapshot_scale  # noqa: E402
from ingest.model import ParsedRecord, ParsedReport, ReportMeta  # noqa: E402
from ingest.storing import store_report  # noqa: E402
from snapshotter import jobs  # noqa: E402
from store import keys as key_tools, meter_path, open_db  # noqa: E402
from store.clock import utcnow  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.models import (ApiKey, DailyRollup, Domain, DomainDay, Member,  # noqa: E402
                          Organization, ScoreHistory, Snapshot, Source)

SEED = 5
DOMAINS = [f"brand{i:02d}.example" for i in range(50)]
IPS_PER_DOMAIN = 100
RECORDS_PER_REPORT = 10
KEYS = 2000
# A domain's senders by rank: a couple of big services, then a long tail (Zipf, s = 1).
SENDER_WEIGHTS = list(accumulate(1.0 / (r + 1) for r in range(IPS_PER_DOMAIN)))
BASE = "/api/v1"


def senders(rng):
    """Per domain: (ip, chance of aligned SPF pass, of aligned DKIM pass, service or None)."""
    out = []
    for d in range(len(DOMAINS)):
        rows = []
        for j in range(IPS_PER_DOMAIN):
            n = d * IPS_PER_DOMAIN + j
            good = rng.random() < 0.85
            service = f"Service {n % 40}" if n % 5 == 0 else None
            rows.append((f"198.{18 + n // 65536}.{n // 256 % 256}.{n % 256}",
                         0.97 if good else 0.1, 0.95 if good else 0.05, service))
        out.append(rows)
    return out


def rows_for(records: int, today, rng):
    """Rollup and DomainDay rows that `records` generated records aggregate to."""
    table = senders(rng)
    weights = [1.0 / (i + 1) ** 0.7 for i in range(len(DOMAINS))]
    total_w = sum(weights)
    rollup, domain_days = {}, {}
    for d, domain in enumerate(DOMAINS):
        per_day = records * weights[d] / total_w / 365
        for back in range(1, 366):
            day = today - timedelta(days=back)
            n = int(per_day) + (rng.random() < per_day - int(per_day))
            messages = 0
            for ip, spf_p, dkim_p, _s in rng.choices(table[d], cum_weights=SENDER_WEIGHTS, k=n):
                count = max(1, int(rng.lognormvariate(2.0, 1.3)))
                spf, dkim = rng.random() < spf_p, rng.random() < dkim_p
                r = rollup.setdefault((domain, day, ip), [0, 0, 0, 0, 0, 0])
                r[0] += count
                r[1] += count if spf or dkim else 0
                r[2] += count if spf else 0
                r[3] += count if dkim else 0
                r[4] += count if not (spf or dkim) and rng.random() < 0.1 else 0
                r[5] += 1
                messages += count
            if n:
                domain_days[(domain, day)] = (math.ceil(n / RECORDS_PER_REPORT), messages,
                                              ("none", "quarantine", "reject")[d % 3])
    return table, rollup, domain_days


def build(path: pathlib.Path, records: int):
    """Generate the store at path (cached: the same records and today give the same file)."""
    database = open_db(f"sqlite:///{path}")
    rng, today = random.Random(SEED), utcnow().date()
    with database.connection_context():
        migrate(database)
        org = Organization.create(name="Snapshot bench", plan="unlimited")
        member = Member.create(org=org, email="owner@bench.example", role="owner")
        plaintexts = []
        for _ in range(KEYS):
            plaintext = key_tools.new_key()
            plaintexts.append(plaintext)
            ApiKey.create(org=org, member=member, digest=key_tools.digest(plaintext),
                          prefix=key_tools.display_prefix(plaintext), scope="read")
        for domain in DOMAINS:
            Domain.create(org=org, name=domain, source="both")
        table, rollup, domain_days = rows_for(records, today, rng)
        first = datetime(today.year, today.month, today.day) - timedelta(days=365)
        with database.atomic():
            Source.insert_many([(org.id, ip, first, first + timedelta(days=364),
                                 service and service.lower().replace(" ", "-"), service)
                                for rows in table for ip, _a, _b, service in rows],
                               fields=[Source.org, Source.ip, Source.first_seen, Source.last_seen,
                                       Source.service_slug, Source.service_name]).execute()
    db_file = sqlite3.connect(path)
    rollup_cols = [f.column_name for f in (DailyRollup.org, DailyRollup.domain, DailyRollup.day,
                   DailyRollup.source_ip, DailyRollup.messages, DailyRollup.compliant,
                   DailyRollup.spf_aligned_pass, DailyRollup.dkim_aligned_pass,
                   DailyRollup.forwarded, DailyRollup.reports)]
    with db_file:
        db_file.executemany(
            f"INSERT INTO {DailyRollup._meta.table_name} ({','.join(rollup_cols)}) "
            f"VALUES ({','.join('?' * len(rollup_cols))})",
            # Day by day, as reports arrive: a day's rows lie together, as ingest writes them.
            ((org.id, d, day.isoformat(), ip, *v[:5], min(v[5], domain_days[(d, day)][0]))
             for (d, day, ip), v in sorted(rollup.items(), key=lambda kv: kv[0][1])))
    with database.connection_context(), database.atomic():
        rows = [dict(org=org.id, domain=d, day=day, reports=v[0], messages=v[1], policy_p=v[2])
                for (d, day), v in domain_days.items()]
        for start in range(0, len(rows), 500):
            DomainDay.insert_many(rows[start:start + 500]).execute()
    db_file.close()
    (path.with_suffix(".keys")).write_text("\n".join(plaintexts))
    return len(rollup), len(domain_days)


def one_more_day(org_id: str, records: int, rng, day) -> int:
    """A day's reports (records / 365 of them) stored through the real storer; reports stored."""
    table = senders(random.Random(SEED))
    begin = int(datetime.combine(day, datetime.min.time(), timezone.utc).timestamp())
    per_domain = max(1, records // 365 // len(DOMAINS))
    stored = 0
    for d, domain in enumerate(DOMAINS):
        for r in range(0, per_domain, RECORDS_PER_REPORT):
            recs = []
            for _ in range(min(RECORDS_PER_REPORT, per_domain - r)):
                ip, spf_p, dkim_p, _s = table[d][rng.randrange(IPS_PER_DOMAIN)]
                spf = "pass" if rng.random() < spf_p else "fail"
                dkim = "pass" if rng.random() < dkim_p else "fail"
                count = max(1, int(rng.lognormvariate(2.0, 1.3)))
                signed = [{"Domain": domain, "Selector": "s", "Result": dkim, "HumanResult": ""}]
                sent = [{"Domain": domain, "Scope": "mfrom", "Result": spf, "HumanResult": ""}]
                recs.append(ParsedRecord(ip, count, "none", dkim, spf, None, "", domain, domain,
                                         signed, sent))
            meta = ReportMeta("bench.example", f"{day}-{d}-{r}", begin, begin + 86400, domain,
                              adkim="r", aspf="r", p="reject")
            store_report(ParsedReport(f"{domain}-{r}.xml", meta, iter(recs)), org=org_id)
            stored += 1
    return stored


def timed(label, job):
    started = time.perf_counter()
    result = job()
    seconds = time.perf_counter() - started
    print(f"  {label}: {seconds:.3f} s", flush=True)
    return seconds, result


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--duration", type=int, default=3, help="seconds per target and round")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved rounds of wrk runs")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each refresh measured")
    parser.add_argument("--no-http", action="store_true", help="skip the throughput part")
    parser.add_argument("--domains", type=int, default=0,
                        help="add this many subdomains with a report each; measure at scale")
    args = parser.parse_args(argv)

    OUT.mkdir(parents=True, exist_ok=True)
    pristine = OUT / f"snapshot-{args.records}-{utcnow().date()}.db"
    if not pristine.exists():
        started = time.perf_counter()
        rollups, days = build(pristine, args.records)
        print(f"store built in {time.perf_counter() - started:.1f} s: {rollups:,} rollup rows, "
              f"{days:,} domain-days", flush=True)
    work = OUT / "snapshot-work.db"
    for path in (work, pathlib.Path(meter_path(str(work)))):
        for suffix in ("", "-wal", "-shm"):
            pathlib.Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copy(pristine, work)
    if args.domains:
        return at_scale(work, args)
    database = open_db(f"sqlite:///{work}")
    with database.connection_context():
        migrate(database)           # the counters' file starts empty beside the copy
        org_id = Organization.get().id
        rollups = DailyRollup.select().count()
        print(f"organization: {args.records:,} records, {len(DOMAINS)} domains, "
              f"{len(DOMAINS) * IPS_PER_DOMAIN:,} source IPs, {rollups:,} rollup rows", flush=True)
        fulls, same, incremental = [], [], []
        for _ in range(args.repeat):     # cold each time: no snapshots, no day totals, no history
            Snapshot.delete().where(Snapshot.org == org_id).execute()
            ScoreHistory.delete().where(ScoreHistory.org == org_id).execute()
            seconds, first = timed("full refresh (first run, history back-filled)",
                                   lambda: jobs.refresh_org(org_id, utcnow()))
            fulls.append(seconds)
        for _ in range(args.repeat):
            seconds, _ = timed("refresh, nothing changed",
                               lambda: jobs.refresh_org(org_id, utcnow()))
            same.append(seconds)
        rng = random.Random(SEED + 1)
        for k in range(args.repeat):     # the next day's reports arrive, then a refresh that day
            now = utcnow() + timedelta(days=k)
            stored = one_more_day(org_id, args.records, rng, now.date())
            print(f"  stored one more day ({now.date()}): {stored} reports through store_report",
                  flush=True)
            seconds, after = timed("refresh after one more day",
                                   lambda: jobs.refresh_org(org_id, now))
            incremental.append(seconds)
        sizes = {kind: sum(len(bytes(b)) for (b,) in Snapshot.select(Snapshot.body)
                           .where(Snapshot.org == org_id, Snapshot.kind == kind).tuples())
                 for kind in jobs.SERVED_KINDS}
        overview = len(bytes(Snapshot.get(Snapshot.org == org_id,
                                          Snapshot.kind == "overview").body))
    print(f"\nload average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          f"(best and median of {args.repeat})")
    print(f"full refresh     best {min(fulls):7.3f} s  median {statistics.median(fulls):7.3f} s   "
          f"(goal < 5 s)   {first.blobs} snapshots, {first.days_summed:,} domain-days summed")
    print(f"nothing changed  best {min(same):7.3f} s  median {statistics.median(same):7.3f} s")
    print(f"one more day     best {min(incremental):7.3f} s  "
          f"median {statistics.median(incremental):7.3f} s"
          f"   (goal < 0.5 s) {after.days_summed} domain-days summed")
    print("snapshot bytes   " + ", ".join(f"{k} {v:,}" for k, v in sizes.items())
          + f"; total {sum(sizes.values()):,}; overview {overview:,}")
    if args.no_http:
        return
    serve(work, org_id, args)


def at_scale(work: pathlib.Path, args):
    """The organization with args.domains more domains (bench/snapshot_scale.py)."""
    database = open_db(f"sqlite:///{work}")
    with database.connection_context():
        migrate(database)
        org_id = Organization.get().id
        now = utcnow()
        started = time.perf_counter()
        snapshot_scale.add_auto_domains(org_id, args.domains, now.date())
    print(f"{args.domains:,} subdomains added in {time.perf_counter() - started:.1f} s "
          f"(beside {len(DOMAINS)} domains, {args.records:,} records)", flush=True)
    key = (OUT / f"snapshot-{args.records}-{utcnow().date()}.keys").read_text().split()[0]
    figures = snapshot_scale.measure(work, org_id, key, DOMAINS[0], now)
    snapshot_scale.print_figures(len(DOMAINS) + args.domains, figures)


def serve(work: pathlib.Path, org_id: str, args):
    wrk = ensure_wrk()
    keys = (work.parent / f"snapshot-{args.records}-{utcnow().date()}.keys").read_text().split()
    health = [f"{BASE}/domains/{d}/health" for d in DOMAINS]
    ceiling = "bare WSGI, constant 2 KB (ceiling)"
    targets = [Target(ceiling, "bench.api_apps:bare", ["/constant"]),
               # The same pipeline (key look-up, metering) without a snapshot: what rua costs
               # anyway.
               Target("/enums (no snapshot: auth + metering)", "wsgi:app", [f"{BASE}/enums"],
                      ceiling),
               Target("/dashboard/overview", "wsgi:app", [f"{BASE}/dashboard/overview"], ceiling),
               Target("/domains/{d}/health (50 domains)", "wsgi:app", health, ceiling)]
    print(f"\n{args.rounds} rounds of {args.duration} s a target, targets shuffled in each round",
          flush=True)
    measure(wrk, work, targets, keys, rounds=args.rounds, seconds=args.duration,
            connections=args.connections, threads=args.threads)
    report(targets)
    print("(ratio: req/s over the ceiling's in the same round; the median of the rounds, with "
          "the lowest and highest)")


if __name__ == "__main__":
    main()
