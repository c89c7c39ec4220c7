"""GET /healthz and /readyz: probes outside the versioned API, without a key, never metered."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from store import job_runs
from store.migrations import latest_version
from store.models import SchemaVersion
from store.models import Usage
from webapp import create_app


def test_healthz_answers_without_a_key_and_without_the_store(config, tmp_path):
    # A store that cannot be opened (its path is a folder): the process still answers.
    app = create_app(config.replace(database_url=f"sqlite:///{tmp_path}"))
    response = app.test_client().get("/healthz")
    assert response.status_code == 200
    assert json.loads(response.data) == {"status": "ok"}
    assert response.headers["Cache-Control"] == "no-store"


def test_readyz_is_ready_on_a_current_store_and_names_the_schema_version(client, database):
    response = client.get("/readyz")
    body = json.loads(response.data)
    assert response.status_code == 200
    assert body["status"] == "ready"
    assert body["schema_version"] == latest_version()
    assert body["scheduler"] == {"last_run_at": None, "jobs": []}


def test_readyz_reports_when_the_scheduler_last_ran_each_job(client, database):
    began = datetime(2026, 11, 26, 10, 0, 0, tzinfo=timezone.utc)
    job_runs.started("dirty", began)
    job_runs.finished("dirty", began.replace(second=2), ok=True)
    job_runs.started("dns", began.replace(minute=5))
    job_runs.finished("dns", began.replace(minute=6), ok=False)
    body = json.loads(client.get("/readyz").data)
    assert body["scheduler"]["last_run_at"] == "2026-11-26T10:05:00Z"
    assert body["scheduler"]["jobs"] == [
        {"name": "dirty", "started_at": "2026-11-26T10:00:00Z",
         "finished_at": "2026-11-26T10:00:02Z", "ok": True, "runs": 1, "failures": 0},
        {"name": "dns", "started_at": "2026-11-26T10:05:00Z",
         "finished_at": "2026-11-26T10:06:00Z", "ok": False, "runs": 1, "failures": 1}]


def test_readyz_is_503_with_the_reason_when_the_store_does_not_answer(config, tmp_path):
    app = create_app(config.replace(database_url=f"sqlite:///{tmp_path}"))
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert json.loads(response.data) == {"status": "unavailable",
                                         "reason": "the store does not answer"}


def test_readyz_is_503_when_the_schema_is_behind_and_says_to_run_init(app, client, database):
    newest = SchemaVersion.select().order_by(SchemaVersion.version.desc()).first()
    newest.delete_instance()
    try:
        response = client.get("/readyz")
    finally:
        # A Postgres store outlives the test: the next one needs its schema whole.
        SchemaVersion.create(version=newest.version, description=newest.description)
    body = json.loads(response.data)
    assert response.status_code == 503
    assert body["schema_version"] < newest.version
    assert "run `rua init`" in body["reason"]


def test_probes_are_not_metered_even_with_a_key(client, database, key):
    sent = {"Authorization": f"Bearer {key}"}
    for _ in range(3):
        assert client.get("/healthz", headers=sent).status_code == 200
        assert client.get("/readyz", headers=sent).status_code == 200
    assert Usage.select().count() == 0


def test_probes_answer_head_and_refuse_other_methods(client, database):
    assert client.head("/healthz").status_code == 200
    assert client.head("/readyz").status_code == 200
    refused = client.post("/healthz")
    assert refused.status_code == 405
    assert refused.headers["Allow"] == "GET, HEAD"
