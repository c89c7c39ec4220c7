"""A Postgres restart under a running gunicorn: 503 storage_unavailable with Retry-After while
it is down, answers again once it is up, the same processes throughout."""
from __future__ import annotations

import time

import pytest

from config import Config
from store import open_db
from tests import postgres_cluster
from tests.factories import make_key, make_org
from tests.servers import http_get, running_gunicorn


@pytest.fixture(scope="module")
def cluster():
    yield from postgres_cluster.for_test()


def first_answer(url: str, key: str, wanted: int, timeout: float = 30):
    """The first answer with status `wanted` (asked every 50 ms), or the last one."""
    deadline = time.monotonic() + timeout
    while True:
        answer = http_get(url, key, timeout=10)
        if answer[0] == wanted or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def test_a_restart_is_503_storage_unavailable_then_answered_by_the_same_workers(
        cluster, tmp_path):
    database = open_db(cluster.url("rua"))
    with database.connection_context():
        _, key = make_key(make_org(plan="team"))
    database.close_all()
    config = Config(database_url=cluster.url("rua"), offline=True, lock_dir=str(tmp_path))
    with running_gunicorn(config, tmp_path / "gunicorn.log") as (base, process):
        assert http_get(f"{base}/enums", key)[0] == 200
        cluster.stop("fast")
        status, headers, body = first_answer(f"{base}/enums", key, 503)
        assert status == 503 and b'"storage_unavailable"' in body
        assert headers["Retry-After"] == "1"
        cluster.start()
        assert first_answer(f"{base}/enums", key, 200)[0] == 200
        assert process.poll() is None
