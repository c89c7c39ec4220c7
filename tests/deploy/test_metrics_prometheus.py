"""/metrics under a real gunicorn of 3 workers, scraped by a real Prometheus (Debian's package)."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.factories import make_key, make_org, make_report
from tests.servers import free_port, http_get, running_gunicorn, wait_until_listening

TOKEN = "metrics-token-for-the-test"
REQUESTS = 90
ROUTE = "/api/v1/enums"
DEADLINE = 120          # seconds for Prometheus to start, scrape and answer: generous, not timed


@pytest.fixture
def served(config, database, tmp_path):
    """gunicorn, 3 workers, metrics behind a token: (site URL, API base, keys, token file)."""
    org = make_org(plan="unlimited")
    # Three keys: each stays under the abuse limit (50 requests in 10 s per key).
    keys = [make_key(org)[1] for _ in range(3)]
    make_report(make_org(name="Acme"), "acme.example", org_name="google.com",
                records=[{"count": 7}])
    token_file = tmp_path / "metrics.token"
    token_file.write_text(TOKEN + "\n")
    with running_gunicorn(config, tmp_path / "gunicorn.log", RUA_WORKERS="3",
                          RUA_METRICS="true", RUA_METRICS_TOKEN_FILE=str(token_file)) as (base, _):
        yield base.removesuffix("/api/v1"), base, keys, token_file


def scrape(site: str, token: str | None = TOKEN) -> tuple[int, dict, str]:
    status, headers, body = http_get(f"{site}/metrics", token)
    return status, headers, body.decode()


def requests_counted(text: str, route: str) -> float:
    return sum(sample.value for family in text_string_to_metric_families(text)
               for sample in family.samples
               if sample.name == "rua_http_requests_total" and sample.labels["route"] == route)


@pytest.mark.slow
def test_every_workers_requests_are_counted_whichever_worker_answers_the_scrape(served):
    site, base, keys, _ = served
    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(lambda i: http_get(f"{base}/enums", keys[i % 3])[0],
                                 range(REQUESTS)))
    assert statuses == [200] * REQUESTS
    # Each scrape may be answered by another worker: all give the same, exact count.
    for _ in range(3):
        status, headers, text = scrape(site)
        assert status == 200
        assert requests_counted(text, ROUTE) == REQUESTS
    status, headers, _ = scrape(site, token="wrong")
    assert status == 401 and headers["WWW-Authenticate"] == 'Bearer realm="rua metrics"'


@pytest.mark.slow
def test_a_restarted_server_counts_from_zero_and_its_workers_files_are_cleared(config, database,
                                                                              tmp_path):
    _, key = make_key(make_org(plan="unlimited"))
    counted = []
    for run in range(2):
        with running_gunicorn(config, tmp_path / f"gunicorn{run}.log", RUA_WORKERS="2",
                              RUA_METRICS="true") as (base, _):
            site = base.removesuffix("/api/v1")
            for _ in range(3 + run):
                assert http_get(f"{base}/enums", key)[0] == 200
            counted.append(requests_counted(scrape(site, token=None)[2], ROUTE))
    assert counted == [3, 4]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("promtool") is None, reason="no promtool (Debian: prometheus)")
def test_promtool_accepts_a_scrape_of_gunicorn(served):
    site, base, keys, _ = served
    http_get(f"{base}/enums", keys[0])
    _, _, text = scrape(site)
    result = subprocess.run(["promtool", "check", "metrics"], input=text.encode(),
                            capture_output=True, timeout=60)
    assert result.returncode == 0, (result.stdout + result.stderr).decode()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian's prometheus missing")
def test_a_real_prometheus_scrapes_rua_with_the_token_and_answers_a_query(served, tmp_path):
    site, base, keys, token_file = served
    for _ in range(5):
        assert http_get(f"{base}/enums", keys[0])[0] == 200
    with running_prometheus(tmp_path, site.removeprefix("http://"), token_file) as api:
        enums = f'sum(rua_http_requests_total{{route="{ROUTE}",status="200"}})'
        assert poll(api, enums, lambda v: v >= 5) >= 5
        acme = 'dmarc_total{organization="Acme",reporter="google.com",from_domain="acme.example"}'
        assert poll(api, acme, lambda v: v > 0) == 7
        assert poll(api, 'up{job="rua"}', lambda v: v == 1) == 1


def running_prometheus(tmp_path, target: str, token_file):
    """Prometheus scraping `target` every second with the token; yields its API's URL."""
    import contextlib

    @contextlib.contextmanager
    def run():
        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n  - job_name: rua\n"
            f"    authorization:\n      credentials_file: {token_file}\n"
            f"    static_configs:\n      - targets: ['{target}']\n")
        log = tmp_path / "prometheus.log"
        with open(log, "w") as out:
            process = subprocess.Popen(
                ["prometheus", f"--config.file={config}",
                 f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_until_listening(process, port, log.read_text, name="prometheus")
            yield f"http://127.0.0.1:{port}/api/v1"
        finally:
            process.terminate()
            process.wait(timeout=30)

    return run()


def poll(api: str, query: str, ready) -> float:
    """The query's one value once `ready(value)` holds; fails after a generous deadline."""
    url = f"{api}/query?{urllib.parse.urlencode({'query': query})}"
    deadline = time.monotonic() + DEADLINE
    answer = None
    while time.monotonic() < deadline:
        status, _, body = http_get(url)
        answer = json.loads(body) if status == 200 else body
        results = answer["data"]["result"] if status == 200 else []
        if len(results) == 1 and ready(float(results[0]["value"][1])):
            return float(results[0]["value"][1])
        time.sleep(0.5)
    raise AssertionError(f"Prometheus never answered {query!r} as expected: {answer}")
