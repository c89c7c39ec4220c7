"""The hourly quota under a real gunicorn of 4 workers: exact, whichever worker serves a request."""
from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from snapshotter.jobs import refresh_org
from store.clock import utcnow
from tests.factories import make_key, make_org
from tests.servers import http_get, quiet_gunicorn

KEYS = 25                 # 1,100 requests / 25 keys = 44 per key: under the abuse limit of 50


def _get(url: str, key: str) -> tuple[int, dict, dict]:
    status, headers, body = http_get(url, key)
    return status, headers, json.loads(body)


def _clear_of_the_hour_boundary(margin: int = 40) -> None:
    """The server uses the real clock: never let the burst straddle two clock hours."""
    left = 3600 - int(time.time()) % 3600
    if left < margin:
        time.sleep(left + 1)


@pytest.fixture
def server(config, database, tmp_path):
    """gunicorn with 4 workers on the test's store; yields the API base URL."""
    with quiet_gunicorn(config, tmp_path) as base:
        yield base


# /dashboard/overview is answered by the snapshot fast path once a worker knows the key and the
# snapshot (webapp/snapshot_fast_path.py), /enums always by Flask: the count is exact on both paths and mixed.
@pytest.mark.slow
@pytest.mark.parametrize("path", ["/enums", "/dashboard/overview"])
def test_1100_concurrent_requests_on_a_quota_of_1000_allow_exactly_1000(server, path):
    org = make_org(plan="free")
    keys = [make_key(org)[1] for _ in range(KEYS)]
    refresh_org(org.id, utcnow())        # the overview's snapshot is there before the burst
    _clear_of_the_hour_boundary()
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda i: _get(f"{server}{path}", keys[i % KEYS]), range(1100)))
    statuses = [status for status, _, _ in answers]
    others = [body for status, _, body in answers if status not in (200, 429)]
    assert (statuses.count(200), statuses.count(429), others) == (1000, 100, [])
    assert {body["code"] for status, _, body in answers if status == 429} == {"quota_exceeded"}
    assert {h["X-RateLimit-Remaining"] for s, h, _ in answers if s == 429} == {"0"}
    served = sorted(int(h["X-RateLimit-Remaining"]) for s, h, _ in answers if s == 200)
    assert served == list(range(1000))          # every remaining value handed out exactly once

    status, _, body = _get(f"{server}/api-keys/usage?days=1", keys[0])
    assert status == 200
    assert (body["window"]["used"], body["window"]["remaining"]) == (1000, 0)
    assert (body["points"][-1]["allowed"], body["points"][-1]["rejected"]) == (1000, 100)
    assert sum(k["allowed"] for k in body["keys"]) == 1000
    assert sum(k["rejected"] for k in body["keys"]) == 100
    assert body["verdict"]["state"] == "capped"


@pytest.mark.slow
def test_sequential_requests_see_the_headers_decrease_one_by_one(server):
    _, key = make_key(make_org(plan="free"))
    _clear_of_the_hour_boundary(margin=5)
    remaining = [_get(f"{server}/enums", key)[1]["X-RateLimit-Remaining"] for _ in range(8)]
    assert remaining == [str(n) for n in range(999, 991, -1)]
