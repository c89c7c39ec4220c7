"""deploy/grafana-dashboard.json: importable into Grafana 10+, and every query its panels and
variables run answered with data by a real Prometheus (Debian's package) scraping a real rua."""
from __future__ import annotations

import json
import math
import pathlib
import re
import shutil
import time
import urllib.parse

import pytest

from jobs import scheduler, table
from store import channels, events
from store.clock import to_epoch, utcnow
from tests.deploy.test_metrics_prometheus import DEADLINE, TOKEN, running_prometheus
from tests.factories import make_key, make_org, make_report, make_usage
from tests.servers import http_get, running_gunicorn

DASHBOARD = json.loads((pathlib.Path(__file__).resolve().parents[2] / "deploy" /
                        "grafana-dashboard.json").read_text())
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# What Grafana puts in place of its variables: every organization and domain ("All"), and a
# rate window of a few scrapes.
VARIABLES = {"$__rate_interval": "5m", "$organization": ".*", "$domain": ".*"}
STARTING = 503        # Prometheus listens before its store is ready to answer
LABEL_VALUES = re.compile(r"^label_values\((?P<expr>.+),\s*(?P<label>\w+)\)$")


def panels(dashboard: dict) -> list[dict]:
    """Every panel but the rows, those inside collapsed rows too."""
    found = []
    for panel in dashboard["panels"]:
        found += panel.get("panels", []) if panel["type"] == "row" else [panel]
    return found


def queries(dashboard: dict) -> list[str]:
    """The PromQL of every panel target, and of every query variable (Grafana's
    label_values(expr, label) asks for the label's values among expr's series)."""
    found = [target["expr"] for panel in panels(dashboard) for target in panel["targets"]]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            match = LABEL_VALUES.match(variable["query"])
            assert match, variable["query"]
            found.append(f"count by ({match['label']}) ({match['expr']})")
    return found


def substituted(query: str) -> str:
    for name, value in VARIABLES.items():
        query = query.replace(name, value)
    assert "$" not in query, f"a variable the test does not know: {query}"
    return query


def test_the_dashboard_reads_the_prometheus_chosen_on_import():
    [source] = [v for v in DASHBOARD["templating"]["list"] if v["type"] == "datasource"]
    assert (source["name"], source["query"]) == ("datasource", "prometheus")
    for panel in panels(DASHBOARD):
        assert panel["datasource"] == DATASOURCE, panel["title"]
        assert all(target["datasource"] == DATASOURCE for target in panel["targets"])
    assert DASHBOARD["schemaVersion"] >= 38                 # Grafana 10.0's


def test_the_panels_are_laid_out_on_the_grid_without_overlap():
    ids = [panel["id"] for panel in DASHBOARD["panels"] + panels(DASHBOARD)]
    assert len(set(ids)) == len(panels(DASHBOARD)) + sum(
        panel["type"] == "row" for panel in DASHBOARD["panels"])
    taken = set()
    for panel in DASHBOARD["panels"]:
        box = panel["gridPos"]
        assert box["x"] + box["w"] <= 24, panel["title"]
        cells = {(x, y) for x in range(box["x"], box["x"] + box["w"])
                 for y in range(box["y"], box["y"] + box["h"])}
        assert not cells & taken, panel["title"]
        taken |= cells


def test_no_query_names_a_source_ip():
    """Reporters choose the IPs: a series per IP would grow without bound."""
    for query in queries(DASHBOARD):
        assert "ip" not in re.findall(r"\w+", query.lower()) and "source" not in query, query


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian's prometheus missing")
def test_every_query_of_the_dashboard_returns_data_from_a_real_prometheus(config, database,
                                                                         tmp_path):
    acme = make_org(name="Acme", plan="unlimited")
    report(acme, "first")
    channels.add(acme.id, "webhook", "https://hooks.example/rua", None, secret="s3cret")
    events.raise_event(acme.id, "dns_record_missing", "dns_record_missing:acme.example",
                       title="No SPF record for acme.example", domain="acme.example")
    run_job("dirty", config)
    _, key = make_key(acme)
    _, spent = capped_key()
    token_file = tmp_path / "metrics.token"
    token_file.write_text(TOKEN + "\n")
    with running_gunicorn(config, tmp_path / "gunicorn.log", RUA_WORKERS="2", RUA_METRICS="true",
                          RUA_METRICS_TOKEN_FILE=str(token_file)) as (base, _):
        site = base.removesuffix("/api/v1")
        with running_prometheus(tmp_path, site.removeprefix("http://"), token_file) as api:
            answered(api, 'up{job="rua"} == 1')
            # Once Prometheus has scraped: the counters rise while it watches, as in use.
            report(acme, "second")
            run_job("dirty", config)
            assert [http_get(f"{base}/enums", key)[0] for _ in range(5)] == [200] * 5
            assert http_get(f"{base}/enums", spent)[0] == 429
            for query in queries(DASHBOARD):
                answered(api, substituted(query))


def report(org, report_id: str):
    """A report received now for acme.example from one reporter: passing, failing, quarantined
    and rejected messages."""
    return make_report(org, "acme.example", org_name="google.com", report_id=report_id, records=[
        {"count": 40},
        {"source_ip": "198.51.100.7", "count": 3, "dkim": "fail", "spf": "fail",
         "disposition": "quarantine"},
        {"source_ip": "203.0.113.5", "count": 2, "dkim": "fail", "spf": "fail",
         "disposition": "reject"}])


def run_job(name: str, config) -> None:
    """The scheduler's own job, under its lock, recorded as the scheduler records it."""
    [job] = [job for job_name, job, _ in table.job_table(config) if job_name == name]
    assert scheduler.run_exclusive(name, job, config)


def capped_key():
    """A key of a free organization that spent this hour's quota (and the next one's, should
    the hour turn during the test)."""
    org = make_org(name="Spent", plan="free")
    hour = to_epoch(utcnow()) // 3600 * 3600
    for start in (hour, hour + 3600):
        make_usage(org, hour=start, allowed=1000)
    return make_key(org)


def answered(api: str, query: str) -> list[dict]:
    """The query's series once at least one has a number (not NaN); fails after the deadline."""
    url = f"{api}/query?{urllib.parse.urlencode({'query': query})}"
    deadline = time.monotonic() + DEADLINE
    answer = None
    while time.monotonic() < deadline:
        status, _, body = http_get(url)
        if status != STARTING:
            answer = json.loads(body)
            assert status == 200, f"Prometheus refused {query!r}: {answer}"
            results = answer["data"]["result"]
            if any(not math.isnan(float(result["value"][1])) for result in results):
                return results
        time.sleep(0.5)
    raise AssertionError(f"Prometheus never answered {query!r} with data: {answer}")
