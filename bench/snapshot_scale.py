"""The organization of many domains (bench/snapshot.py --domains N): what the snapshotter pays
for it, and what the next request pays once its body is stale.

Every measured step runs in a fresh process (spawned, nothing inherited), so its peak RSS is
its own: the refresh of the whole organization (the snapshotter's work), then, after a report
marked the organization dirty and the tolerance passed, the next /domains/{d}/health and the
next /dashboard/overview through the app (each computes its one body). Goals: the health
request under 100 ms whatever the number of domains (issue 21); the refresh linear in domains.
"""
from __future__ import annotations

import multiprocessing
import resource
import time
from datetime import datetime, timedelta

AUTO_PARENT = "evil.example"


def add_auto_domains(org_id: str, count: int, today) -> None:
    """`count` subdomains of AUTO_PARENT as ingest leaves them after one report each today:
    an auto Domain row, a DomainDay and one DailyRollup row (the store is open)."""
    from store import db
    from store.models import DailyRollup, Domain, DomainDay
    names = [f"s{n}.{AUTO_PARENT}" for n in range(count)]
    tables = ((Domain, lambda n: dict(org=org_id, name=n, source="auto")),
              (DomainDay, lambda n: dict(org=org_id, domain=n, day=today, reports=1, messages=1,
                                         policy_p="none")),
              (DailyRollup, lambda n: dict(org=org_id, domain=n, day=today,
                                           source_ip="203.0.113.9", messages=1, reports=1)))
    with db.atomic():
        for model, row in tables:
            for start in range(0, count, 500):
                model.insert_many([row(n) for n in names[start:start + 500]]).execute()


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _step(path: str, org_id: str, what: str, now: datetime, key: str = "") -> tuple:
    """In a spawned process: (seconds, peak MB before the step, peak MB after it)."""
    from config import Config
    from snapshotter import jobs
    from store import open_db
    from store.models import Organization
    from webapp import create_app
    config = Config(database_url=f"sqlite:///{path}", offline=True,
                    lock_dir=str(__import__("pathlib").Path(path).parent))
    if what == "refresh":
        database = open_db(config.database_url)
        with database.connection_context():
            Organization.select().count()           # connected and imported before timing
            before, started = _peak_mb(), time.perf_counter()
            jobs.refresh_org(org_id, now)
    else:
        client = create_app(config, clock=lambda: now).test_client()
        headers = {"Authorization": f"Bearer {key}"}
        assert client.get("/api/v1/enums", headers=headers).status_code == 200   # warm
        before, started = _peak_mb(), time.perf_counter()
        response = client.get(f"/api/v1{what}", headers=headers)
        assert response.status_code == 200, response.get_data(as_text=True)
    return time.perf_counter() - started, before, _peak_mb()


def measure(path, org_id: str, key: str, domain: str, now: datetime) -> dict:
    """The refresh at `now`, then a report's dirty mark and the next requests 2 h later."""
    from store import open_db
    from store.models import Organization
    spawn = multiprocessing.get_context("spawn")
    out = {}
    with spawn.Pool(1, maxtasksperchild=1) as pool:
        out["snapshotter: refresh of the whole organization"] = pool.apply(
            _step, (str(path), org_id, "refresh", now))
    database = open_db(f"sqlite:///{path}")
    with database.connection_context():
        (Organization.update(dirty_since=now + timedelta(minutes=1))
         .where(Organization.id == org_id).execute())
    later = now + timedelta(hours=2)
    for label, what in (("next health request (stale: computed alone)",
                         f"/domains/{domain}/health"),
                        ("next overview request (stale: computed alone)",
                         "/dashboard/overview")):
        with spawn.Pool(1, maxtasksperchild=1) as pool:
            out[label] = pool.apply(_step, (str(path), org_id, what, later, key))
    return out


def print_figures(domains: int, figures: dict) -> None:
    print(f"\n{domains:,} domains: time, peak RSS of the step's process (and its growth)")
    for label, (seconds, before, after) in figures.items():
        goal = "   (goal < 100 ms)" if "health" in label else ""
        print(f"  {label:48s} {seconds * 1000:9.1f} ms  {after:7.1f} MB "
              f"(+{after - before:.1f}){goal}")
