"""The snapshot fast path: a stored snapshot answered below Flask when nothing about the request is
unusual.

What it buys: a snapshot answer is bytes already made, yet Flask's request machinery costs more
than the key check, the metering and the bytes together (bench/mechanisms.py measures the
routes with and without the fast path). This WSGI layer answers a plain GET or HEAD of
/dashboard/overview, /compliance-score or /domains/{domain}/health on SQLite, where the key, the
snapshot and the domain's monitored check are usually kept in this worker from earlier requests
at the same store version (store/versioned.py).

What it costs to keep correct: it must answer exactly as Flask would, and nothing else knows it
is there. It goes through the functions the Flask path uses (webapp.auth, webapp.quota,
webapp.health, webapp.snapshot_answers, webapp.answer_headers, webapp.errors). Until it meters,
anything it cannot serve goes to Flask untouched, which then answers it from scratch: another
path or method, a query string, a condition header, a key refused, a missing permission, an
unmonitored domain, a snapshot missing or stale, the store failing. Once it has metered it
answers whatever happens, errors included (a refusal, storage failing), so the request counts
once. tests/webapp/test_snapshot_fast_path.py compares the two paths. On Postgres the store's version
is unknown, so every request takes the Flask path.
"""
from __future__ import annotations

import sqlite3
from types import SimpleNamespace

from peewee import DatabaseError, InterfaceError

from store.versioned import data_version
from webapp import answer_headers, connections, errors, health, params, quota, snapshot_answers
from webapp.errors import ApiError
from webapp.snapshot_answers import CONDITIONS

# The view of each path the fast path answers: their permissions and quota kinds are read from it.
ENDPOINTS = {"overview": "dashboard.overview", "compliance": "scores.score",
             "health": "health.show"}


class Route:
    """One kind of snapshot the fast path serves: the view's permission and the route's quota kind."""

    def __init__(self, app, kind: str):
        endpoint = ENDPOINTS[kind]
        self.kind = kind
        self.permission = app.view_functions[endpoint].permission
        rule = next(app.url_map.iter_rules(endpoint)).rule
        self.heavy, self.counted = quota.route_kind(rule)


class SnapshotFastPath:
    """WSGI middleware over Flask's wsgi_app (see the module's docstring)."""

    def __init__(self, app, database, base: str):
        self.flask_wsgi = app.wsgi_app
        self.app, self.database = app, database
        self.auth = app.extensions["rua.auth"]
        self.exact = {f"{base}/dashboard/overview": Route(app, "overview"),
                      f"{base}/compliance-score": Route(app, "compliance")}
        self.health = Route(app, "health")
        self.domains = f"{base}/domains/"

    def __call__(self, environ, start_response):
        answer = self.answer(environ)
        if answer is None:
            return self.flask_wsgi(environ, start_response)
        status, headers, body = answer
        start_response(status, headers)
        return [] if environ["REQUEST_METHOD"] == "HEAD" else [body]

    def answer(self, environ) -> tuple[str, list, bytes] | None:
        """(status, headers, body) of the answer, or None: Flask answers."""
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD") or environ.get("QUERY_STRING"):
            return None
        if any(name in environ for name in CONDITIONS):
            return None
        route, variant = self.route(environ.get("PATH_INFO", ""))
        if route is None or self.database.is_closed():
            return None
        try:
            return self.serve(environ, route, variant)
        except (DatabaseError, InterfaceError, sqlite3.Error):
            return None         # nothing counted yet: the Flask path tries again and reports

    def route(self, path: str) -> tuple[Route | None, str]:
        route = self.exact.get(path)
        if route is not None:
            return route, ""
        if path.startswith(self.domains) and path.endswith("/health") and path.isascii():
            name = path[len(self.domains):-len("/health")]
            try:
                if params.domain(name) == name:
                    return self.health, name
            except ApiError:
                pass
        return None, ""

    def serve(self, environ, route: Route, variant: str) -> tuple[str, list, bytes] | None:
        version = data_version(self.database)
        if version is None:
            return None         # nothing is kept (Postgres): Flask's path is as quick
        now = self.app.config["RUA_CLOCK"]()
        try:
            principal = self.auth.authenticate(environ.get("HTTP_AUTHORIZATION"), now, version)
        except ApiError:
            return None         # a 401: Flask says why, counting nothing
        if not principal.allows(route.permission):
            return None
        org_id = principal.org_id
        if route.kind == "health" and not health.monitored(org_id, variant, version):
            return None
        snapshot = snapshot_answers.stored(org_id, route.kind, variant, version)
        if snapshot is None or not snapshot_answers.fresh(org_id, route.kind, snapshot, now,
                                                          version):
            return None         # Flask computes it
        metered = SimpleNamespace(quota=None)
        try:
            quota.gate(metered, principal, now, heavy=route.heavy, counted=route.counted)
        except Exception as error:     # noqa: BLE001 - a refusal, or storage failing once
            return self.failed(environ, error, metered.quota)
        headers = snapshot_answers.headers(snapshot.body, snapshot.etag, snapshot.computed_at)
        # The fields answer_headers.add gives Flask's answers (the snapshot's Cache-Control
        # is its own).
        headers.append(answer_headers.NOSNIFF)
        if metered.quota is not None:
            headers.extend(quota.headers(metered.quota).items())
        return "200 OK", headers, snapshot.body

    def failed(self, environ, error: Exception, verdict) -> tuple[str, list, bytes]:
        """The error answer once metering began, made as Flask's error handler and
        after-request steps make it, so the request is counted once."""
        response = errors.render(error, environ)
        if verdict is not None:
            response.headers.extend(quota.headers(verdict))
        answer_headers.add(response)
        if isinstance(error, errors.UNAVAILABLE):
            connections.drop_failed(self.app)
        return response.status, response.headers.to_wsgi_list(), response.get_data()
