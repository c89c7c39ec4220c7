"""Errors: one body shape, 404 for undocumented paths, 405 without a body, 500 and 503."""
from __future__ import annotations

import os

import pytest

import store
from config import Config
from tests.webapp.helpers import assert_error, get
from webapp import create_app

DOCUMENTED = ["/enums", "/domains"]


# "/" is the dashboard's overview (webapp/pages).
@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v2/enums", "/api/v1/enums/",
                                  "/api/v1//enums", "/api/v1/ENUMS", "/static/x.css"])
def test_an_undocumented_path_is_404_route_not_found_before_authentication(client, path):
    assert_error(client.get(path), 404, "route_not_found")


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"])
@pytest.mark.parametrize("path", DOCUMENTED)
def test_any_other_method_on_a_documented_path_is_405_with_allow_and_no_body(client, method, path):
    resp = client.open("/api/v1" + path, method=method)
    assert resp.status_code == 405
    assert resp.headers["Allow"] == "GET, HEAD"
    assert resp.get_data() == b""


def test_405_comes_before_authentication_even_with_a_bad_key(client):
    resp = client.post("/api/v1/enums", headers={"Authorization": "Bearer nonsense"})
    assert resp.status_code == 405


def test_head_is_answered_like_get_without_a_body(client, key):
    full = get(client, "/enums", key)
    resp = client.head("/api/v1/enums", headers={"Authorization": f"Bearer {key}"})
    assert resp.status_code == 200
    assert resp.get_data() == b""
    assert resp.headers["Content-Length"] == full.headers["Content-Length"]


def test_head_of_an_error_has_the_error_status_and_no_body(client):
    resp = client.head("/api/v1/enums")
    assert resp.status_code == 401
    assert resp.get_data() == b""


def test_an_unexpected_error_is_500_internal_error_without_a_traceback(app, client, key, caplog):
    @app.get("/api/v1/explode")
    def explode():
        raise RuntimeError("secret detail from deep inside")

    resp = get(client, "/explode", key, **{"X-Request-Id": "req-123"})
    assert_error(resp, 500, "internal_error")
    assert b"secret detail" not in resp.get_data()
    assert resp.headers["X-Request-Id"] == "req-123"
    assert any("req-123" in r.getMessage() and r.exc_info for r in caplog.records)


def test_an_unusable_request_id_is_replaced_by_a_fresh_one(app, client, key):
    @app.get("/api/v1/explode")
    def explode():
        raise RuntimeError("boom")

    resp = get(client, "/explode", key, **{"X-Request-Id": "bad id\u00e9" * 20})
    assert len(resp.headers["X-Request-Id"]) == 26


def test_a_sqlite_store_that_cannot_be_opened_is_503_storage_unavailable(tmp_path, caplog):
    app = create_app(Config(database_url=f"sqlite:///{tmp_path}"))   # a directory, not a file
    resp = app.test_client().get("/api/v1/enums", headers={"Authorization": "Bearer " + "rua_" + "A" * 40})
    assert_error(resp, 503, "storage_unavailable")
    assert resp.headers["Retry-After"] == "1"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_sqlite_file_is_503_storage_unavailable(tmp_path):
    path = tmp_path / "locked.db"
    path.write_bytes(b"")
    path.chmod(0)
    app = create_app(Config(database_url=f"sqlite:///{path}"))
    resp = app.test_client().get("/api/v1/enums", headers={"Authorization": "Bearer " + "rua_" + "A" * 40})
    assert_error(resp, 503, "storage_unavailable")


def test_a_postgres_store_where_nothing_listens_is_503_storage_unavailable():
    app = create_app(Config(database_url="postgresql://postgres@127.0.0.1:9/rua?connect_timeout=2"))
    resp = app.test_client().get("/api/v1/enums", headers={"Authorization": "Bearer " + "rua_" + "A" * 40})
    assert_error(resp, 503, "storage_unavailable")


def test_a_404_does_not_need_the_store(tmp_path):
    app = create_app(Config(database_url=f"sqlite:///{tmp_path}"))
    assert_error(app.test_client().get("/api/v1/nope"), 404, "route_not_found")


def test_a_store_locked_past_its_busy_timeout_is_503_storage_unavailable(app, client, org, config):
    if not config.is_sqlite:
        pytest.skip("SQLite's write lock")
    import sqlite3

    from tests.factories import make_key
    _, plaintext = make_key(org)           # never used yet: authenticating it writes last_used_at
    # The request's connection (this thread's) waits 0.2 s for the lock instead of the usual 5 s.
    store.db.obj.execute_sql("PRAGMA busy_timeout = 200")
    holder = sqlite3.connect(config.database_url[len("sqlite:///"):], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        resp = get(client, "/enums", plaintext)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_error(resp, 503, "storage_unavailable")
