"""The provider's benches on Postgres run to their end at a tiny size: the ingest bench at 2
organizations, then the snapshotter's bench on the store it filled. Their figures are not
asserted; a change that breaks a bench (as one broke the snapshotter's call of the ingest
workers) fails here, not in the next person's long run."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import urllib.parse

import pytest
from psycopg2 import sql

from bench.ingest_provider import outside_transaction
from tests.conftest import POSTGRES_URL

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not POSTGRES_URL, reason="the provider's benches need Postgres")


@pytest.fixture
def scratch_url():
    """A database of its own beside the test database, dropped afterwards."""
    parts = urllib.parse.urlsplit(POSTGRES_URL)
    name = parts.path.lstrip("/") + "_provider_bench"
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    outside_transaction(POSTGRES_URL, drop, sql.SQL("CREATE DATABASE {}").format(
        sql.Identifier(name)))
    yield urllib.parse.urlunsplit(parts._replace(path="/" + name))
    outside_transaction(POSTGRES_URL, drop)


def bench(script: str, *options: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *options],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_ingest_and_snapshotter_benches_run_at_two_organizations(scratch_url):
    ingested = bench("ingest_provider.py", "--scale", "0.01", "--database-url", scratch_url)
    assert "2 organizations, 50 domains" in ingested
    assert "reports/s (goal >= 500) against the floor's" in ingested
    refreshed = bench("snapshot_provider.py", "--orgs", "2", "--sample", "1",
                      "--database-url", scratch_url)
    assert "the dirty job on 2 (goal < 60 s)" in refreshed
    assert "health of 50 domains" in refreshed
