"""Every app variant a bench serves boots under gunicorn as the bench starts it
(`bench.api.Gunicorn`) and answers a request: a variant that cannot import rua (as when
bench/ingest.py stood for rua's ingest package) fails here, not as a refused connection
minutes into a run."""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from bench import api_postgres, mechanisms, metering
from bench.api import Gunicorn, targets
from bench.metering_probes import SOCKET_ENV

PROBES = {spec for _, spec in metering.PROBES}
SERVED = sorted({spec for _, spec, _ in targets([])}
                | {mechanisms.FULL, metering.BARE, *api_postgres.APPS.values()} | PROBES)


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_every_bench_variant_is_listed():
    assert len(SERVED) >= 9 and "wsgi:app" in SERVED


@pytest.mark.parametrize("spec", SERVED)
def test_each_served_app_boots_and_answers(spec, config, database, tmp_path):
    if spec in PROBES and not config.database_url.startswith("sqlite"):
        pytest.skip("bench/metering.py --floor serves its probes on SQLite only")
    # The bare variants answer /constant; rua's own routes ask for a key first.
    path = "/constant" if "api_apps" in spec else "/api/v1/enums"
    settings = {"RUA_WORKERS": "1", SOCKET_ENV: str(tmp_path / "probe.sock")}
    with Gunicorn(spec, config.database_url, env=settings) as server:
        assert status_of(server.url + path) in (200, 401)
