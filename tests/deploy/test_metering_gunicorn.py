"""The hourly quota under a real gunicorn of 4 workers: exact, whichever worker serves a request."""
from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.factories import make_key, make_org

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "gunicorn.conf.py"
KEYS = 25                 # 1,100 requests / 25 keys = 44 per key: under the abuse limit of 50


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, key: str) -> tuple[int, dict, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def _clear_of_the_hour_boundary(margin: int = 40) -> None:
    """The server uses the real clock: never let the burst straddle two clock hours."""
    left = 3600 - int(time.time()) % 3600
    if left < margin:
        time.sleep(left + 1)


@pytest.fixture
def server(config, database, tmp_path):
    """gunicorn with 4 workers on the test's store; yields the API base URL."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=config.database_url, RUA_OFFLINE="1", RUA_WORKERS="4",
               RUA_LOCK_DIR=config.lock_dir, RUA_BIND=f"127.0.0.1:{port}", RUA_LOG_LEVEL="warning")
    log = tmp_path / "gunicorn.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(CONF),
                                    "--access-logfile", "/dev/null"], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "gunicorn did not start listening"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/api/v1"
        assert "Traceback" not in log.read_text()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_1100_concurrent_requests_on_a_quota_of_1000_allow_exactly_1000(server):
    org = make_org(plan="free")
    keys = [make_key(org)[1] for _ in range(KEYS)]
    _clear_of_the_hour_boundary()
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda i: _get(f"{server}/enums", keys[i % KEYS]), range(1100)))
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


def test_sequential_requests_see_the_headers_decrease_one_by_one(server):
    _, key = make_key(make_org(plan="free"))
    _clear_of_the_hour_boundary(margin=5)
    remaining = [_get(f"{server}/enums", key)[1]["X-RateLimit-Remaining"] for _ in range(8)]
    assert remaining == [str(n) for n in range(999, 991, -1)]
