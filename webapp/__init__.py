"""The read-only JSON API: an application factory in the flaskr order."""
from __future__ import annotations

import os

from flask import Flask, Response
from flask.json.provider import JSONProvider
from peewee import DatabaseError, InterfaceError

import store
from config import Config
from store.clock import utcnow
from store.encoding import dumps, loads
from store.migrations import UnknownSchema, applied_versions, latest_version, refuse_unknown
from webapp import (answer_headers, catalog, connections, dashboard, docs, domains, enums,
                    errors, events, health, instruments, metrics, openapi, probes, quota,
                    reports, request_checks, scores, sources, statistics, tls_reports,
                    top_sources, trends, usage)
from webapp import pages
from webapp.auth import Authenticator
from webapp.request_log import RequestLog
from webapp.snapshot_fast_path import SnapshotFastPath

# One blueprint per resource, served under the base path.
RESOURCES = (reports.bp, tls_reports.bp, domains.bp, statistics.bp, top_sources.bp, sources.bp,
             events.bp, enums.bp, dashboard.bp, scores.bp, trends.bp, health.bp, usage.bp,
             openapi.bp, docs.bp)


class OrjsonProvider(JSONProvider):
    """Views return dicts; orjson prints them with UTC `Z` times and whole seconds."""

    def dumps(self, obj, **kwargs) -> str:
        return dumps(obj).decode()

    def loads(self, s, **kwargs):
        return loads(s)

    def response(self, *args, **kwargs) -> Response:
        obj = self._prepare_response_obj(args, kwargs)
        return Response(dumps(obj), mimetype="application/json")


class StoreNotReady(RuntimeError):
    """The store's schema is not the one this release serves: `rua init` (or a newer rua) first."""


def _refuse_a_store_left_behind(database) -> None:
    """A store upgraded to this release without `rua init`, or made by a newer rua, stops the
    app at start-up, with the fix: its requests would run against a schema they do not expect
    (on SQLite, without the organization-total triggers nothing would enforce the quotas). A
    store that cannot be
    reached now, or was never initialized, is left to each request to report."""
    try:
        with database.connection_context():
            versions = applied_versions(database)
    except (DatabaseError, InterfaceError):
        return
    try:
        refuse_unknown(versions)
    except UnknownSchema as exc:
        raise StoreNotReady(f"{exc}: start a rua that knows it") from None
    version = max(versions, default=0)
    if 0 < version < latest_version():
        raise StoreNotReady(f"the store's schema is at version {version} of {latest_version()}: "
                            "run `rua init` to upgrade it, then start the API again")


def create_app(config: Config | None = None, *, clock=None) -> Flask:
    """Build the WSGI application; config defaults to the RUA_* environment."""
    config = config if config is not None else Config.from_env(os.environ)
    app = Flask(__name__, static_folder=None)
    # Before any route exists: add_url_rule reads PROVIDE_AUTOMATIC_OPTIONS.
    app.config.update(RUA=config, RUA_CLOCK=clock or utcnow, PROVIDE_AUTOMATIC_OPTIONS=False)
    # Only documented paths exist: "//reports" is not redirected to "/reports".
    app.url_map.merge_slashes = False
    database = store.open_db(config.database_url)
    _refuse_a_store_left_behind(database)
    app.json = OrjsonProvider(app)
    app.extensions["rua.auth"] = Authenticator()
    errors.register(app)

    connections.register(app, database)
    app.before_request(request_checks.check_request)
    app.after_request(quota.add_headers)
    app.after_request(answer_headers.add)

    base = pages.api_path(config)
    for blueprint in RESOURCES:
        app.register_blueprint(blueprint, url_prefix=base)
    # The RFC 9727 catalog and the health probes live at the site root, where tools look;
    # the metrics too, when they are on.
    app.register_blueprint(catalog.bp)
    app.register_blueprint(probes.bp)
    # The dashboard for people: its pages, sign-in and sign-out (webapp/pages).
    app.register_blueprint(pages.bp)
    pages.refuse_a_shared_path(app.url_map, config)
    routes = None
    if config.metrics:
        app.register_blueprint(metrics.bp)
        metrics.enable(app, config)
        routes = instruments.Routes(app.url_map)
    app.wsgi_app = RequestLog(SnapshotFastPath(app, database, base), routes)
    if config.proxies > 0:
        from werkzeug.middleware.proxy_fix import ProxyFix
        n = config.proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n, x_port=n, x_prefix=n)
    return app
