"""The overview concurrency cap under a real gunicorn of 4 workers: slots are shared by processes."""
from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta

import pytest

from store import db, snapshots
from store.models import DailyRollup, DomainDay, Snapshot
from tests.factories import make_key, make_org
from tests.servers import http_get, quiet_gunicorn
from tests.snapshotter.slots import slots_held_elsewhere

FREE_CAP = 2


def _get(url: str, key: str, **headers) -> tuple[int, dict, bytes]:
    return http_get(url, key, timeout=60, **headers)


@pytest.fixture
def server(config, database, tmp_path):
    """gunicorn with 4 workers on the test's store; yields the API base URL."""
    with quiet_gunicorn(config, tmp_path) as base:
        yield base


def test_slots_held_by_another_process_make_a_computing_request_503_busy(server, config):
    org = make_org(plan="free")
    key = make_key(org)[1]
    with slots_held_elsewhere(org, FREE_CAP, config.lock_dir):
        status, headers, body = _get(f"{server}/dashboard/overview", key)
        assert status == 503 and headers["Retry-After"] == "1"
        assert json.loads(body) == {"error": "Service Unavailable", "code": "busy"}
    with slots_held_elsewhere(org, FREE_CAP - 1, config.lock_dir):
        status, headers, body = _get(f"{server}/dashboard/overview", key)
    assert status == 200 and body == snapshots.get(org.id, "overview").body
    again = _get(f"{server}/dashboard/overview", key, **{"If-None-Match": headers["ETag"]})
    assert again[0] == 304


def a_year_of_rollups(org, ips=100):
    """Rollup rows as a year of ingest leaves them: the first refresh sums them all (a long read)."""
    today = date.today()
    rows = [dict(org=org.id, domain="example.com", day=today - timedelta(days=n),
                 source_ip=f"198.18.{i // 256}.{i % 256}", messages=10, compliant=9,
                 spf_aligned_pass=9, dkim_aligned_pass=8, reports=1)
            for n in range(365) for i in range(ips)]
    with db.atomic():
        for start in range(0, len(rows), 1000):
            DailyRollup.insert_many(rows[start:start + 1000]).execute()
        DomainDay.insert_many([dict(org=org.id, domain="example.com", day=today - timedelta(days=n),
                                    reports=ips, messages=10 * ips, policy_p="reject")
                               for n in range(365)]).execute()


@pytest.mark.slow
def test_parallel_computing_requests_beyond_the_free_cap_of_2_are_refused(server):
    org = make_org(plan="free")
    a_year_of_rollups(org)
    keys = [make_key(org)[1] for _ in range(8)]
    answers = []
    for _wave in range(3):     # each wave finds no blob, so every request must compute
        Snapshot.delete().where(Snapshot.org == org.id).execute()
        barrier = threading.Barrier(8)

        def ask(i):
            barrier.wait(timeout=30)
            return _get(f"{server}/dashboard/overview", keys[i])

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers += list(pool.map(ask, range(8)))
    statuses = sorted(status for status, _, _ in answers)
    assert set(statuses) <= {200, 503} and statuses.count(503) >= 1, statuses
    assert statuses.count(200) >= 3
    for status, headers, body in answers:
        if status == 503:
            assert headers["Retry-After"] == "1" and json.loads(body)["code"] == "busy"
    assert len({body for status, _, body in answers if status == 200}) == 1
