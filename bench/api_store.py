"""A large SQLite store for bench/api.py, written straight into the tables with bulk inserts.

What is generated (deterministic for a given size; seed 1):
- one organization "Bench" on the unlimited plan, its owner, and KEYS read keys (the plaintexts
  are re-derived from the seed, never written down);
- 40 monitored domains, report volume skewed towards the first ones (Zipf-like);
- N aggregate reports spread over the 365 days before the store was made, from 12 reporters,
  each with 1 to 6 records drawn from its domain's 12 to 60 sending IPs (a few of them failing
  DMARC); every report row carries its totals, compliance rate and failure summary;
- DailyRollup and DomainDay rows aggregated from every report's records (what /statistics and
  /top-sources read), and Record rows only for the SAMPLE newest reports (the ones
  /reports/{id} is measured on): the other reports' records live only in the rollups.
"""
from __future__ import annotations

import hashlib
import os
import random
import sqlite3
from datetime import date, datetime, timedelta, timezone

from store import keys, meter_path, open_db
from store.ids import encode
from store.migrations import migrate
from store.models import (MODELS, ApiKey, DailyRollup, Domain, DomainDay, Member, Organization,
                          Record, Report)

SEED = 1
KEYS = 2000
SAMPLE = 1000
DOMAINS = [f"brand{i:02d}.example" for i in range(1, 41)]
REPORTERS = [("google.com", "noreply-dmarc-support@google.com"),
             ("Outlook.com", "dmarcreport@microsoft.com"), ("Yahoo", "dmarchelp@yahooinc.com"),
             ("Mail.Ru", "dmarc_support@corp.mail.ru"), ("comcast.net", "dmarc@comcast.net"),
             ("GMX", "dmarc@gmx.net"), ("WEB.DE", "dmarc@web.de"), ("Orange", "dmarc@orange.fr"),
             ("Zoho", "dmarc@zoho.com"), ("Fastmail", "dmarc@fastmail.com"),
             ("Proofpoint", "dmarc@proofpoint.com"), ("Mimecast", "dmarc@mimecast.org")]
POLICIES = ["none", "quarantine", "reject"]


def schema_tag() -> str:
    """Short hash of the tables' columns: a cached store made for another schema is not reused."""
    text = ";".join(f"{m._meta.table_name}:{','.join(f.column_name for f in m._meta.sorted_fields)}"
                    for m in MODELS)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def bench_keys(count: int = KEYS) -> list[str]:
    """The plaintext keys of the bench organization, the same on every call."""
    rng = random.Random(f"{SEED}-keys")
    return [keys.KEY_PREFIX + encode(rng.getrandbits(5 * keys.KEY_BODY), keys.KEY_BODY)
            for _ in range(count)]


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _senders(rng: random.Random):
    """Per domain: its sending IPs with their chance to pass SPF and DKIM (aligned)."""
    out = []
    for d in range(len(DOMAINS)):
        ips = []
        for j in range(rng.randint(12, 60)):
            ip = (f"198.51.{d}.{j + 1}" if j % 4 else f"2001:db8:{d:x}::{j + 1:x}")
            good = rng.random() < 0.8
            ips.append((ip, 0.97 if good else 0.1, 0.95 if good else 0.05))
        out.append(ips)
    return out


def _rows(org_id: str, reports: int, today: date):
    """Report rows, Record rows for the sample, and the rollups: all in column order."""
    rng = random.Random(SEED)
    senders = _senders(rng)
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(DOMAINS))]
    report_rows, record_rows, rollup, days = [], [], {}, {}
    first_day = today - timedelta(days=365)
    for n in range(reports):
        d = rng.choices(range(len(DOMAINS)), weights)[0]
        day = first_day + timedelta(days=n * 365 // reports)
        begin = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        end = begin + timedelta(days=1)
        received = end + timedelta(seconds=rng.randint(600, 6 * 3600))
        reporter, email = REPORTERS[rng.randrange(len(REPORTERS))]
        p = POLICIES[d % 3]
        total = compliant = spf_only = dkim_only = both = 0
        recs = []
        for ordinal in range(rng.randint(1, 6)):
            ip, spf_p, dkim_p = senders[d][rng.randrange(len(senders[d]))]
            count = max(1, int(rng.lognormvariate(2.5, 1.5)))
            spf = "pass" if rng.random() < spf_p else "fail"
            dkim = "pass" if rng.random() < dkim_p else "fail"
            ok = spf == "pass" or dkim == "pass"
            total += count
            compliant += count if ok else 0
            spf_only += spf == "fail" and dkim == "pass"
            dkim_only += dkim == "fail" and spf == "pass"
            both += not ok
            recs.append((ordinal, ip, count, spf, dkim, ok))
            key = (d, day, ip)
            r = rollup.setdefault(key, [0, 0, 0, 0, 0, set()])
            r[0] += count
            r[1] += count if ok else 0
            r[2] += count if spf == "pass" else 0
            r[3] += count if dkim == "pass" else 0
            r[5].add(n)
        dd = days.setdefault((d, day), [0, 0, p])
        dd[0] += 1
        dd[1] += total
        rid = encode((int(received.timestamp() * 1000) << 80) | rng.getrandbits(80), 26)
        summary = f'{{"spf_only":{spf_only},"dkim_only":{dkim_only},"both":{both},"total":{len(recs)}}}'
        report_rows.append((
            rid, org_id, hashlib.sha256(f"{n}".encode()).hexdigest(), "1.0", reporter, email, "",
            f"{reporter.lower()}-{n}", int(begin.timestamp()), int(end.timestamp()),
            day.isoformat(), day.isoformat(), None, "", DOMAINS[d], "r", "r", p, "", "", None, "0",
            "", "", "", total, compliant, round(100.0 * compliant / total, 2), len(recs), summary,
            None, _ts(received)))
        if n >= reports - SAMPLE:
            for ordinal, ip, count, spf, dkim, ok in recs:
                record_rows.append((
                    rid, org_id, ordinal, ip, count, "none" if ok else p, dkim, spf, None,
                    "example.net", DOMAINS[d], DOMAINS[d],
                    f'[{{"Domain":"{DOMAINS[d]}","Selector":"s1","Result":"{dkim}","HumanResult":""}}]',
                    f'[{{"Domain":"{DOMAINS[d]}","Scope":"mfrom","Result":"{spf}","HumanResult":""}}]',
                    '{"spf":[true],"dkim":[true]}',
                    "authenticated" if ok else "needs_review"))
    rollup_rows = [(org_id, DOMAINS[d], day.isoformat(), ip, r[0], r[1], r[2], r[3], r[4], len(r[5]))
                   for (d, day, ip), r in rollup.items()]
    day_rows = [(org_id, DOMAINS[d], day.isoformat(), v[0], v[1], v[2], None, "")
                for (d, day), v in days.items()]
    return report_rows, record_rows, rollup_rows, day_rows


REPORT_COLUMNS = ("id", "org_id", "dedupe_key", "version", "org_name", "email",
                  "extra_contact_info", "report_id", "date_begin", "date_end", "day_begin",
                  "day_end", "errors", "generator", "domain", "adkim", "aspf", "p", "sp", "np",
                  "pct", "fo", "testing", "psd", "discovery_method", "total_messages",
                  "compliant_messages", "compliance_rate", "record_count", "failure_summary",
                  "parse_warnings", "received_at")
RECORD_COLUMNS = ("report_id", "org_id", "ordinal", "source_ip", "count", "disposition", "dkim",
                  "spf", "reasons", "envelope_to", "envelope_from", "header_from", "auth_dkim",
                  "auth_spf", "alignment", "classification")
ROLLUP_COLUMNS = ("org_id", "domain", "day", "source_ip", "messages", "compliant",
                  "spf_aligned_pass", "dkim_aligned_pass", "forwarded", "reports")
DAY_COLUMNS = ("org_id", "domain", "day", "reports", "messages", "policy_p", "policy_pct",
               "policy_testing")


def _bulk(conn, model, columns, rows, chunk: int = 50000):
    """executemany in chunks; columns the generator does not know get the model's default."""
    extra = [f for f in model._meta.sorted_fields
             if f.column_name not in columns and not (f.primary_key and f.column_name == "id")]
    tail = tuple(f.db_value(f.default() if callable(f.default) else f.default) for f in extra)
    tail = tuple(_ts(v) if isinstance(v, datetime) else v for v in tail)
    names = list(columns) + [f.column_name for f in extra]
    sql = (f'INSERT INTO "{model._meta.table_name}" ({", ".join(names)}) '
           f'VALUES ({", ".join("?" * len(names))})')
    for start in range(0, len(rows), chunk):
        conn.executemany(sql, [row + tail for row in rows[start:start + chunk]])


def build(path: str, reports: int, *, progress=print) -> None:
    """Write the store to path (via a temporary file, so an interrupted run leaves nothing)."""
    partial = path + ".partial"
    for leftover in (partial, partial + "-wal", partial + "-shm"):
        if os.path.exists(leftover):
            os.remove(leftover)
    database = open_db(f"sqlite:///{partial}")
    with database.connection_context():
        migrate(database)
        org = Organization.create(name="Bench", plan="unlimited")
        owner = Member.create(org=org, email="owner@bench.example", role="owner")
        ApiKey.insert_many([{"org": org.id, "member": owner.id, "name": f"bench-{i}",
                             "digest": keys.digest(k), "prefix": keys.display_prefix(k),
                             "scope": "read"} for i, k in enumerate(bench_keys())]).execute()
        Domain.insert_many([{"org": org.id, "name": name, "source": "manual"}
                            for name in DOMAINS]).execute()
        org_id = org.id
    database.close()
    progress(f"generating {reports:,} reports ...")
    report_rows, record_rows, rollup_rows, day_rows = _rows(org_id, reports, date.today())
    conn = sqlite3.connect(partial)
    conn.execute("PRAGMA synchronous = OFF")
    with conn:
        _bulk(conn, Report, REPORT_COLUMNS, report_rows)
        _bulk(conn, Record, RECORD_COLUMNS, record_rows)
        _bulk(conn, DailyRollup, ROLLUP_COLUMNS, rollup_rows)
        _bulk(conn, DomainDay, DAY_COLUMNS, day_rows)
    conn.execute("ANALYZE")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    progress(f"stored {len(report_rows):,} reports, {len(record_rows):,} records, "
             f"{len(rollup_rows):,} rollup rows, {len(day_rows):,} domain-days")
    os.replace(partial, path)
    # The counters' file is named after the store's; the partial one held no counts.
    os.remove(meter_path(partial))


def sample_ids(path: str, count: int = SAMPLE) -> list[str]:
    """Ids of the newest reports (the ones with records), for /reports/{id}."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute(
            "SELECT id FROM report ORDER BY received_at DESC LIMIT ?", (count,))]
    finally:
        conn.close()
