"""The application factory: base path from RUA_BASE_URL, root modules, proxies, wsgi."""
from __future__ import annotations

import importlib
import sys

import pytest

from config import Config
from tests.webapp.helpers import assert_error, get
from webapp import RESOURCES, create_app


def test_blueprints_are_served_under_the_path_of_the_base_url(config, database, clock):
    app = create_app(config.replace(base_url="https://dmarc.example.net/rua/api/v1/"), clock=clock)
    rules = {r.rule for r in app.url_map.iter_rules()}
    assert "/rua/api/v1/enums" in rules and "/api/v1/enums" not in rules


def test_every_resource_module_has_a_blueprint_registered(app):
    for name in RESOURCES:
        module = importlib.import_module(f"webapp.{name}")
        assert app.blueprints[module.bp.name] is module.bp


def test_no_rule_answers_options_or_serves_static_files(app):
    for rule in app.url_map.iter_rules():
        assert rule.methods == {"GET", "HEAD"}, rule


def test_proxy_fix_is_applied_only_when_proxies_are_trusted(config, database):
    plain = create_app(config)
    proxied = create_app(config.replace(proxies=1))
    assert type(plain.wsgi_app).__name__ == "BlobLane"
    assert type(proxied.wsgi_app).__name__ == "ProxyFix"
    assert type(proxied.wsgi_app.app).__name__ == "BlobLane"


def test_config_defaults_to_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RUA_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    monkeypatch.setenv("RUA_BASE_URL", "http://h/v/api/v1")
    app = create_app()
    assert app.config["RUA"] == Config(database_url=f"sqlite:///{tmp_path / 'env.db'}", base_url="http://h/v/api/v1")


def test_wsgi_module_builds_the_app_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RUA_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    sys.modules.pop("wsgi", None)
    wsgi = importlib.import_module("wsgi")
    assert_error(wsgi.app.test_client().get("/api/v1/enums"), 401, "missing_key")
    sys.modules.pop("wsgi", None)


def test_responses_are_json(client, key):
    resp = get(client, "/enums", key)
    assert resp.headers["Content-Type"] == "application/json"


def test_a_request_gives_its_connection_back(config, database, clock):
    import store
    app = create_app(config, clock=clock)
    app.test_client().get("/api/v1/enums")
    # Postgres returns it to the pool; SQLite keeps one per thread (closing checkpoints the WAL).
    assert store.db.obj.is_closed() is not config.is_sqlite
    assert not store.db.obj.in_transaction()


def test_a_request_never_leaves_a_transaction_open_for_the_next(app, client, key):
    import store

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


def test_a_store_never_initialized_is_left_to_each_request(config, tmp_path):
    create_app(config.replace(database_url=f"sqlite:///{tmp_path / 'empty.db'}"))
