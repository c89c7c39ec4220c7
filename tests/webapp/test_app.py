"""The application factory: base path from RUA_BASE_URL, root modules, proxies, wsgi."""
from __future__ import annotations

import importlib
import pathlib
import sys
import threading
import time

import pytest
from flask import Blueprint

import store
import webapp
from config import Config
from tests.factories import make_key, make_org
from tests.webapp.helpers import assert_error, get
from webapp import connections, create_app


def test_the_api_is_served_under_the_path_of_the_base_url(config, database, clock):
    app = create_app(config.replace(base_url="https://dmarc.example.net/rua/api/v1/"), clock=clock)
    client = app.test_client()
    assert_error(client.get("/rua/api/v1/enums"), 401, "missing_key")
    assert_error(client.get("/api/v1/enums"), 404, "route_not_found")


def test_no_static_files_are_served(client, key):
    assert_error(client.get("/static/openapi.json"), 404, "route_not_found")
    assert_error(get(client, "/static/openapi.json", key), 404, "route_not_found")


def _seen_by_a_view(app, client, key, **headers) -> dict:
    """What a view reads of the client's address, scheme and host, sent with these headers."""
    from flask import request

    @app.get("/api/v1/seen")
    def seen():
        return {"remote_addr": request.remote_addr, "scheme": request.scheme,
                "host": request.host, "url_root": request.url_root}

    return get(client, "/seen", key, **headers).get_json()


FORWARDED = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https",
             "X-Forwarded-Host": "reports.example.net", "X-Forwarded-Prefix": "/dmarc"}


def test_forwarded_headers_are_ignored_when_no_proxy_is_trusted(app, client, key):
    assert _seen_by_a_view(app, client, key, **FORWARDED) == {
        "remote_addr": "127.0.0.1", "scheme": "http", "host": "localhost",
        "url_root": "http://localhost/"}


def test_forwarded_headers_of_one_trusted_proxy_are_honoured(config, database, clock):
    app = create_app(config.replace(proxies=1), clock=clock)
    with store.db.obj.connection_context():
        key = make_key(make_org(plan="team"))[1]
        seen = _seen_by_a_view(app, app.test_client(), key,
                               **{**FORWARDED, "X-Forwarded-For": "198.51.100.1, 203.0.113.9"})
    # One proxy: only the address it appended last is trusted, not what the client claimed.
    assert seen == {"remote_addr": "203.0.113.9", "scheme": "https",
                    "host": "reports.example.net", "url_root": "https://reports.example.net/dmarc/"}


def test_config_defaults_to_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RUA_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    monkeypatch.setenv("RUA_BASE_URL", "http://h/v/api/v1")
    app = create_app()
    assert app.config["RUA"] == Config(database_url=f"sqlite:///{tmp_path / 'env.db'}",
                                       base_url="http://h/v/api/v1")


def test_wsgi_module_builds_the_app_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RUA_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    sys.modules.pop("wsgi", None)
    wsgi = importlib.import_module("wsgi")
    assert_error(wsgi.app.test_client().get("/api/v1/enums"), 401, "missing_key")
    sys.modules.pop("wsgi", None)


def test_responses_are_json(client, key):
    resp = get(client, "/enums", key)
    assert resp.headers["Content-Type"] == "application/json"


def test_a_request_keeps_its_connection_for_the_next(config, database, clock):
    # One per worker thread: closing SQLite's last one checkpoints the WAL; a Postgres one taken
    # from the pool again would be checked with a round trip each time.
    client = create_app(config, clock=clock).test_client()
    client.get("/api/v1/enums")
    first = store.db.obj.connection()
    client.get("/api/v1/enums")
    assert store.db.obj.connection() is first
    assert not store.db.obj.in_transaction()


def test_a_request_on_another_thread_gives_a_postgres_connection_back(config, database, clock):
    app = create_app(config, clock=clock)
    closed = []

    def ask():
        app.test_client().get("/api/v1/enums")
        closed.append(store.db.obj.is_closed())
    thread = threading.Thread(target=ask)
    thread.start()
    thread.join()
    # SQLite keeps one per thread; a thread other than the main one may not live as long as
    # the process, so its Postgres connection goes back to the pool.
    assert closed == [not config.is_sqlite]


def test_a_kept_postgres_connection_the_server_ended_is_replaced(config, database, clock):
    if config.is_sqlite:
        pytest.skip("a Postgres connection")
    client = create_app(config, clock=clock).test_client()
    client.get("/api/v1/enums")                  # the main thread now keeps a connection
    _, key = make_key(make_org(plan="team"))
    kept = store.db.obj.connection()
    assert get(client, "/enums", key).status_code == 200
    database.execute_sql("SELECT pg_terminate_backend(%s)", (kept.get_backend_pid(),))
    deadline = time.monotonic() + 10             # the server ends it a moment later
    while not connections.lost(kept) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert get(client, "/enums", key).status_code == 200
    assert store.db.obj.connection() is not kept


def test_a_request_never_leaves_a_transaction_open_for_the_next(app, client, key):
    @app.get("/api/v1/half-done")
    def half_done():
        store.db.obj.begin()
        raise RuntimeError("failed half way")

    assert get(client, "/half-done", key).status_code == 500
    assert not store.db.obj.in_transaction()


def test_a_store_upgraded_without_rua_init_stops_the_app_with_the_fix(config, database):
    from store.models import SchemaVersion
    from store.migrations import latest_version
    if not config.is_sqlite:
        pytest.skip("the Postgres test database outlives the test: its schema stays as it is")
    SchemaVersion.delete().where(SchemaVersion.version == latest_version()).execute()
    with pytest.raises(RuntimeError, match="run `rua init`"):
        create_app(config)


def test_a_store_a_newer_rua_made_stops_the_app(config, database):
    from store.models import SchemaVersion
    SchemaVersion.create(version=99, description="made by a newer rua")
    try:
        with pytest.raises(RuntimeError, match="schema version 99 is newer than this rua knows"):
            create_app(config)
    finally:        # create_app pointed the shared proxy at its own connection
        database.execute_sql("DELETE FROM schema_version WHERE version = 99")


def test_a_store_never_initialized_is_left_to_each_request(config, tmp_path):
    create_app(config.replace(database_url=f"sqlite:///{tmp_path / 'empty.db'}"))


def test_every_blueprint_under_webapp_is_registered(config, database, clock):
    # Registration is by name in create_app: a new resource module left out would serve nothing.
    # The metrics blueprint is registered only when they are on, so they are on here.
    app = create_app(config.replace(metrics=True), clock=clock)
    package = pathlib.Path(webapp.__file__).parent
    names = [path.stem for path in package.glob("*.py")]
    names += [path.parent.name for path in package.glob("*/__init__.py")]    # webapp/pages
    defined = set()
    for name in sorted(names):
        module = importlib.import_module(f"webapp.{name}")
        if isinstance(getattr(module, "bp", None), Blueprint):
            defined.add(module.bp.name)
    assert defined == set(app.blueprints)


def test_the_catalog_and_probes_are_at_the_site_root_and_the_resources_under_the_base_path(
        config, database, clock):
    app = create_app(config.replace(base_url="https://dmarc.example.net/rua/api/v1/"), clock=clock)
    rules = {rule.endpoint: rule.rule for rule in app.url_map.iter_rules()}
    assert rules["catalog.index"] == "/.well-known/api-catalog"
    assert {rule for endpoint, rule in rules.items() if endpoint.startswith("probes.")} == {
        "/healthz", "/readyz"}
    # The dashboard's pages are at the site root too (webapp/pages).
    elsewhere = [rule for endpoint, rule in rules.items()
                 if not endpoint.startswith(("catalog.", "probes.", "pages."))]
    assert elsewhere and all(rule.startswith("/rua/api/v1/") for rule in elsewhere)
