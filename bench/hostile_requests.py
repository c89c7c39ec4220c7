"""What hostile reports cost the API afterwards (issue 21): the next health request on the
store the subdomain attack left, and GET /reports/{id} of a very large report.

Each request runs in a fresh spawned process on the store: its time, and its peak RSS during
the request (the high-water mark reset just before it) with the growth over the RSS before. HOOKS are bench/hostile.py's AFTER_ATTACK entries;
run alone it measures the report detail:

    .venv/bin/python bench/hostile_requests.py [--records 150000]

Goals: the next health request under 100 ms whatever the domains; the detail's growth in
memory far below its body (it is streamed a page of records at a time).
"""
from __future__ import annotations

import argparse
import multiprocessing
import pathlib
import sys
import tempfile
import time
from datetime import datetime, timezone

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field)) / 1024


def _reset_peak() -> float:
    """Start the peak RSS afresh (Linux: clear_refs 5) and return the RSS now."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    return _status_mb("VmRSS:")


def _get(url: str, org_id: str, path: str) -> dict:
    """In a spawned process: one GET through the app with a new key, read piece by piece."""
    from config import Config
    from store import keys, open_db
    from store.models import ApiKey, Member
    from webapp import create_app
    config = Config(database_url=url, offline=True,
                    lock_dir=str(pathlib.Path(url.removeprefix("sqlite:///")).parent))
    with open_db(url).connection_context():
        member = Member.create(org=org_id, email=f"bench{time.time_ns()}@example.com",
                               role="owner")
        plaintext = keys.new_key()
        ApiKey.create(org=org_id, member=member, digest=keys.digest(plaintext),
                      prefix=keys.display_prefix(plaintext), scope="read")
    client = create_app(config).test_client()
    headers = {"Authorization": f"Bearer {plaintext}"}
    assert client.get("/api/v1/enums", headers=headers).status_code == 200   # warm
    before, started = _reset_peak(), time.perf_counter()
    response = client.get(f"/api/v1{path}", headers=headers)
    size = sum(len(chunk) for chunk in response.response)
    assert response.status_code == 200, response.status_code
    peak = _status_mb("VmHWM:")
    return {"ms": (time.perf_counter() - started) * 1000, "peak_mb": peak,
            "growth_mb": peak - before, "bytes": size}


def get(url: str, org_id: str, path: str) -> dict:
    with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(_get, (url, org_id, path))


def _shown(figures: dict) -> str:
    return (f"{figures['ms']:.1f} ms, peak {figures['peak_mb']:.0f} MB "
            f"(+{figures['growth_mb']:.1f} MB), {figures['bytes']:,} bytes")


def health_after(outcome: dict) -> dict:
    """The next two health requests on the store an attack left (no snapshot yet)."""
    path = f"/domains/{outcome['domain']}/health"
    first = get(outcome["database_url"], outcome["org_id"], path)
    again = get(outcome["database_url"], outcome["org_id"], path)
    return {"next health request (goal < 100 ms)": _shown(first),
            "the one after it (from its snapshot)": _shown(again)}


HOOKS = {"subdomains": health_after}


def large_report(url: str, records: int) -> tuple[str, str]:
    """(org id, report id) of a report of `records` records from as many senders."""
    from ingest.model import ParsedRecord, ParsedReport, ReportMeta
    from ingest.storing import store_report
    from store import open_db
    from store.migrations import migrate
    from store.models import Domain, Organization
    database = open_db(url)
    with database.connection_context():
        migrate(database)
        org = Organization.create(name="Acme", plan="unlimited")
        Domain.create(org=org, name="example.com", source="manual")
        begin = int(datetime.now(timezone.utc).timestamp()) // 86400 * 86400 - 86400
        rows = (ParsedRecord(f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}", 1 + n % 7, "none",
                             "pass" if n % 3 else "fail", "pass", None, "", "example.com",
                             "example.com",
                             [{"Domain": "example.com", "Selector": "s", "Result": "pass",
                               "HumanResult": ""}],
                             [{"Domain": "example.com", "Scope": "mfrom", "Result": "pass",
                               "HumanResult": ""}]) for n in range(records))
        meta = ReportMeta("big.example", "big-1", begin, begin + 86400, "example.com",
                          adkim="r", aspf="r", p="none")
        stored = store_report(ParsedReport("big.xml", meta, rows), org=org.id)
        return org.id, stored.report.id


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=150_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rua-detail-") as tmp:
        url = f"sqlite:///{tmp}/detail.db"
        started = time.perf_counter()
        org_id, report_id = large_report(url, args.records)
        print(f"a report of {args.records:,} records stored in "
              f"{time.perf_counter() - started:.1f} s")
        print(f"GET /reports/{{id}}: {_shown(get(url, org_id, f'/reports/{report_id}'))}")


if __name__ == "__main__":
    main()
