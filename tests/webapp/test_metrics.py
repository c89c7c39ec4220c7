"""GET /metrics: off by default, behind its own token, counting requests by route template."""
from __future__ import annotations

import shutil
import subprocess
from datetime import datetime

import flask
import pytest
from flask.testing import FlaskClient
from prometheus_client import Counter, values
from prometheus_client.parser import text_string_to_metric_families

import store
from snapshotter import jobs, refreshes
from store import job_runs
from store.clock import to_epoch, utcnow
from store.models import Domain, Organization
from tests.snapshotter.reports import NOW as LANE_NOW, TODAY, report_on
from tests.factories import make_domain, make_key, make_org, make_report, make_usage
from tests.webapp.helpers import assert_error
from webapp import create_app

NOON = datetime(2025, 6, 1, 12, 0, 0)
TOKEN = "s3cret-metrics-token"


class Buffered(FlaskClient):
    """Closes each answer after its last byte, as gunicorn does: the request is counted then."""

    def open(self, *args, **kwargs):
        kwargs.setdefault("buffered", True)
        return super().open(*args, **kwargs)


def metered_app(config, **settings):
    app = create_app(config.replace(metrics=True, **settings))
    app.test_client_class = Buffered
    return app


def scrape(client, token: str | None = None) -> dict:
    """{(sample name, frozenset of labels): value} of one scrape."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.content_type.startswith("text/plain; version=0.0.4")
    return samples(response.get_data(as_text=True))


def samples(text: str) -> dict:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(figures: dict, name: str, **labels) -> float:
    return figures.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def metered(config, database, clock):
    """An app with RUA_METRICS on, no token."""
    app = create_app(config.replace(metrics=True), clock=clock)
    app.test_client_class = Buffered
    # create_app points the store at its own database; the factories share its connection.
    with store.db.obj.connection_context():
        yield app.test_client()


def test_the_default_app_has_no_metrics_path(client):
    assert_error(client.get("/metrics"), 404, "route_not_found")


def test_requests_are_counted_by_route_template_and_status_not_by_raw_path(metered):
    _, key = make_key(make_org(plan="unlimited"))
    auth = {"Authorization": f"Bearer {key}"}
    before = scrape(metered)
    for _ in range(3):
        assert metered.get("/api/v1/enums", headers=auth).status_code == 200
    assert metered.get("/api/v1/enums").status_code == 401
    for report_id in ("01J0000000000000000000000A", "01J0000000000000000000000B"):
        assert metered.get(f"/api/v1/reports/{report_id}", headers=auth).status_code == 404
    for path in ("/nothing/here", "/wp-login.php", "/api/v1/nope"):
        assert metered.get(path).status_code == 404
    assert metered.post("/api/v1/enums").status_code == 405
    after = scrape(metered)

    def counted(route, status):
        name = "rua_http_requests_total"
        return (value(after, name, route=route, status=status)
                - value(before, name, route=route, status=status))

    assert counted("/api/v1/enums", "200") == 3
    assert counted("/api/v1/enums", "401") == 1
    assert counted("/api/v1/enums", "405") == 1
    assert counted("/api/v1/reports/<id>", "404") == 2
    assert counted("unmatched", "404") == 3
    latency = "rua_http_request_duration_seconds_count"
    assert (value(after, latency, route="/api/v1/enums")
            - value(before, latency, route="/api/v1/enums")) == 5
    # No series names a raw path.
    assert not any("01J0000" in dict(labels).get("route", "") for _, labels in after)


def test_answers_of_the_snapshot_fast_path_below_flask_are_counted_by_their_route(metered, clock,
                                                                          config):
    if not config.is_sqlite:
        pytest.skip("on Postgres every request takes the Flask path")
    clock.now = LANE_NOW
    org = make_org(plan="team")
    report_on(org, "example.com", TODAY, [{"count": 8}])
    jobs.refresh_org(org.id, LANE_NOW)
    _, key = make_key(org, last_used_at=LANE_NOW)
    handled = []

    def receiver(sender, **extra):
        handled.append(flask.request.path)
    flask.request_started.connect(receiver, metered.application)
    route = "/api/v1/dashboard/overview"
    before = value(scrape(metered), "rua_http_requests_total", route=route, status="200")
    for _ in range(4):
        answer = metered.get(route, headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200
    after = value(scrape(metered), "rua_http_requests_total", route=route, status="200")
    assert after - before == 4
    flask.request_started.disconnect(receiver, metered.application)
    assert handled.count(route) < 4     # the fast path answered some of them below Flask


def test_quota_refusals_are_counted_by_code(metered, clock):
    clock.now = NOON
    row, key = make_key(make_org(plan="free"))
    make_usage(row.org, hour=to_epoch(NOON), allowed=1000)
    before = value(scrape(metered), "rua_quota_refusals_total", code="quota_exceeded")
    response = metered.get("/api/v1/enums", headers={"Authorization": f"Bearer {key}"})
    assert_error(response, 429, "quota_exceeded")
    after = value(scrape(metered), "rua_quota_refusals_total", code="quota_exceeded")
    assert after - before == 1


def test_a_token_file_makes_metrics_ask_for_that_bearer_token(config, database, tmp_path, caplog):
    token_file = tmp_path / "metrics.token"
    token_file.write_text(TOKEN + "\n")
    app = metered_app(config, metrics_token_file=str(token_file))
    client = app.test_client()
    for header in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        refused = client.get("/metrics", headers=header)
        assert_error(refused, 401, "invalid_metrics_token")
        assert refused.headers["WWW-Authenticate"] == 'Bearer realm="rua metrics"'
    assert "rua_http_requests_total" in str(scrape(client, TOKEN))
    assert TOKEN not in caplog.text


@pytest.mark.parametrize("content", [None, ""])
def test_an_unreadable_or_empty_token_file_stops_the_app(config, database, tmp_path, content):
    token_file = tmp_path / "metrics.token"
    if content is not None:
        token_file.write_text(content)
    with pytest.raises(RuntimeError, match="RUA_METRICS_TOKEN_FILE"):
        create_app(config.replace(metrics=True, metrics_token_file=str(token_file)))


def test_metrics_need_no_api_key_and_are_not_metered(metered):
    from store.models import Usage
    scrape(metered)
    assert Usage.select().count() == 0


def test_the_store_figures_use_the_dmarc_exporter_names_and_labels(metered, clock):
    org = make_org(name="Acme")
    make_report(org, "acme.example", org_name="google.com",
                records=[{"count": 7}, {"source_ip": "198.51.100.7", "count": 3, "dkim": "fail",
                                        "spf": "fail", "disposition": "reject"}])
    make_report(org, "acme.example", org_name="google.com", report_id="second",
                records=[{"count": 5, "dkim": "fail"}])
    make_report(org, "acme.example", org_name="Yahoo", report_id="third",
                records=[{"count": 2, "spf": "fail", "disposition": "quarantine"}])
    figures = scrape(metered)
    google = {"organization": "Acme", "reporter": "google.com", "from_domain": "acme.example"}
    yahoo = dict(google, reporter="Yahoo")
    assert value(figures, "dmarc_total", **google) == 15
    assert value(figures, "dmarc_compliant_total", **google) == 12
    assert value(figures, "dmarc_total", **yahoo) == 2
    domain = {"organization": "Acme", "from_domain": "acme.example"}
    assert value(figures, "dmarc_spf_aligned_total", **domain) == 12
    assert value(figures, "dmarc_dkim_aligned_total", **domain) == 9
    assert value(figures, "dmarc_reject_total", **domain) == 3
    assert value(figures, "dmarc_quarantine_total", **domain) == 2
    assert value(figures, "rua_ingest_reports_total", kind="dmarc", outcome="stored") == 3
    assert value(figures, "rua_store_up") == 1


def test_the_scores_are_the_apis_for_monitored_domains_with_messages(metered, clock):
    clock.now = LANE_NOW
    org = make_org(name="Acme", plan="unlimited")
    make_domain(org, "acme.example")
    make_domain(org, "quiet.example")                   # monitored, no messages: no series
    report_on(org, "acme.example", TODAY, [{"count": 6}, {"count": 2, "dkim": "fail",
                                                          "spf": "fail"}])
    report_on(org, "elsewhere.example", TODAY, [{"count": 4}])
    # `rua domain remove`: its reports stay, and the API still scores it; /metrics does not.
    Domain.delete().where(Domain.name == "elsewhere.example").execute()
    unscored = scrape(metered)          # no snapshot yet: no score to give
    assert not [name for name, _ in unscored if name.endswith(("_score", "_ratio"))]
    jobs.refresh_org(org.id, LANE_NOW)
    _, key = make_key(org)
    answer = metered.get("/api/v1/compliance-score",
                         headers={"Authorization": f"Bearer {key}"}).get_json()
    acme = next(d for d in answer["domain_scores"] if d["domain"] == "acme.example")
    figures = scrape(metered)
    domain = {"organization": "Acme", "from_domain": "acme.example"}
    assert value(figures, "rua_domain_compliance_ratio", **domain) == acme["compliance_rate"] / 100
    assert value(figures, "rua_domain_score", **domain) == acme["score"] > 0
    assert value(figures, "rua_organization_score", organization="Acme") == answer["overall_score"]
    scored = {dict(labels)["from_domain"] for name, labels in figures
              if name == "rua_domain_score"}
    assert scored == {"acme.example"}


def test_the_store_figures_say_how_far_behind_rua_is(metered, clock, config):
    clock.now = NOON
    org = make_org(name="Acme")
    make_report(org, "acme.example", received_at=datetime(2025, 6, 1, 11, 0, 0))
    Organization.update(dirty_since=datetime(2025, 6, 1, 11, 58, 0)).execute()
    make_org(name="Quiet")
    Domain.update(dmarc_state="verified",
                  dns={"dmarc": {"status": "ok"}, "spf": {"status": "warning"}}).execute()
    job_runs.started("dirty", datetime(2025, 6, 1, 11, 59, 0))
    job_runs.finished("dirty", datetime(2025, 6, 1, 11, 59, 4), ok=True)
    job_runs.started("dns", datetime(2025, 6, 1, 11, 0, 0))
    job_runs.finished("dns", datetime(2025, 6, 1, 11, 0, 1), ok=False)
    figures = scrape(metered)
    assert value(figures, "rua_newest_report_age_seconds", organization="Acme") == 3600
    assert value(figures, "rua_snapshot_lag_seconds", organization="Acme") == 120
    assert value(figures, "rua_snapshot_lag_seconds", organization="Quiet") == 0
    assert value(figures, "rua_job_runs_total", job="dirty") == 1
    assert value(figures, "rua_job_last_duration_seconds", job="dirty") == 4
    assert value(figures, "rua_job_last_success", job="dirty") == 1
    assert value(figures, "rua_job_failures_total", job="dns") == 1
    assert value(figures, "rua_job_last_success", job="dns") == 0
    assert (value(figures, "rua_job_last_start_timestamp_seconds", job="dns")
            == to_epoch(datetime(2025, 6, 1, 11, 0, 0)))
    assert value(figures, "rua_domains", state="verified") == 1
    assert value(figures, "rua_dns_records", record="spf", status="warning") == 1
    assert value(figures, "rua_sources", enrichment="pending") == 1
    assert value(figures, "rua_sources", enrichment="enriched") == 0
    refreshes.refresh_dirty(NOON, config)
    assert value(scrape(metered), "rua_snapshot_lag_seconds", organization="Acme") == 0


def test_a_store_that_does_not_answer_leaves_the_request_figures(config, tmp_path):
    app = metered_app(config, database_url=f"sqlite:///{tmp_path}")
    figures = scrape(app.test_client())
    assert value(figures, "rua_store_up") == 0
    assert any(name.startswith("rua_http_request") for name, _ in figures)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="no promtool (Debian: prometheus)")
def test_promtool_finds_nothing_wrong_in_a_scrape(metered):
    org = make_org(name="Acme")
    make_report(org, "acme.example", org_name="google.com")
    jobs.refresh_org(org.id, utcnow())
    metered.get("/nothing")
    text = metered.get("/metrics").get_data()
    assert b"rua_domain_compliance_ratio{" in text
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            timeout=60)
    assert result.returncode == 0, (result.stdout + result.stderr).decode()


def test_a_workers_file_still_empty_leaves_every_other_workers_counts(config, database, tmp_path,
                                                                      monkeypatch):
    """Under gunicorn each worker counts in a file of its own, created before it is sized; a
    scrape meeting it empty (or left empty by a worker killed then) still answers."""
    folder = tmp_path / "workers"
    folder.mkdir()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(folder))
    # A worker (pid 4242) that counted 3 requests, in its own file.
    monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue(lambda: 4242))
    Counter("rua_http_requests_total", "", ["route", "status"],
            registry=None).labels("/api/v1/enums", "200").inc(3)
    (folder / "counter_99999.db").touch()              # a worker between creating and sizing
    answer = metered_app(config).test_client().get("/metrics")
    assert answer.status_code == 200
    counted = [sample.value for family in text_string_to_metric_families(answer.get_data(True))
               for sample in family.samples if sample.name == "rua_http_requests_total"
               and sample.labels.get("route") == "/api/v1/enums"]
    assert counted == [3.0]
