"""The snapshot lane: a stored snapshot answered below Flask when nothing about the request is
unusual.

What it buys: a snapshot answer is bytes already made, yet Flask's request machinery costs more
than the key check, the metering and the bytes together (bench/mechanisms.py measures the
routes with and without the lane). This WSGI layer answers a plain
GET or HEAD of /dashboard/overview, /compliance-score or /domains/{domain}/health when all it
needs is known in this worker from earlier requests at the same store version
(store/versioned.py): the key, the fresh snapshot, the domain's monitored check.

What it costs to keep correct: it must answer exactly as Flask would. It authenticates, checks
the view's own permission and meters through the same functions (webapp.auth, webapp.quota)
and sends the same headers; everything else goes to Flask untouched (another path or method, a
query string, a condition header, anything not known, a key that would be refused, a missing
permission). A request whose metering it began and that ended in an error goes to Flask with
its verdict and that error, so the one error handler renders it and it counts once.
tests/webapp/test_snapshot_lane.py compares the two paths. On Postgres nothing is known, so
every request takes the Flask path.
"""
from __future__ import annotations

import sqlite3
from types import SimpleNamespace

from peewee import DatabaseError, InterfaceError

from store.versioned import data_version
from webapp import health, params, quota, snapshot_answers
from webapp.snapshot_answers import CONDITIONS
from webapp.errors import ApiError

# The environ key of a request the lane metered and handed to Flask (webapp.gatekeeper).
METERED = "rua.lane.metered"
# The view of each path the lane answers: their permissions and quota kinds are read from it.
ENDPOINTS = {"overview": "dashboard.overview", "compliance": "scores.score",
             "health": "health.show"}


class Route:
    """One kind of snapshot the lane serves: the view's permission and the route's quota kind."""

    def __init__(self, app, kind: str):
        endpoint = ENDPOINTS[kind]
        self.kind = kind
        self.permission = app.view_functions[endpoint].permission
        rule = next(app.url_map.iter_rules(endpoint)).rule
        self.heavy, self.counted = quota.route_kind(rule)


class SnapshotLane:
    """WSGI middleware over Flask's wsgi_app (see the module's docstring)."""

    def __init__(self, app, database, base: str):
        self.flask_wsgi = app.wsgi_app
        self.app, self.database = app, database
        self.exact = {f"{base}/dashboard/overview": Route(app, "overview"),
                      f"{base}/compliance-score": Route(app, "compliance")}
        self.health = Route(app, "health")
        self.domains = f"{base}/domains/"

    def __call__(self, environ, start_response):
        answer = self.answer(environ)
        if answer is None:
            return self.flask_wsgi(environ, start_response)
        headers, body = answer
        start_response("200 OK", headers)
        return [] if environ["REQUEST_METHOD"] == "HEAD" else [body]

    def answer(self, environ) -> tuple[list, bytes] | None:
        """(headers, body) of the 200 answer, or None: Flask answers."""
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
            return None         # nothing counted: the Flask path tries again and reports

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

    def serve(self, environ, route: Route, variant: str) -> tuple[list, bytes] | None:
        version = data_version(self.database)
        now = self.app.config["RUA_CLOCK"]()
        principal = self.app.extensions["rua.auth"].known(environ.get("HTTP_AUTHORIZATION"), now,
                                                          version)
        if principal is None or not principal.allows(route.permission):
            return None
        org_id = principal.org_id
        if route.kind == "health" and not health.known_monitored(org_id, variant, version):
            return None
        snapshot = snapshot_answers.known(org_id, route.kind, variant, now, version)
        if snapshot is None:
            return None
        metered = SimpleNamespace(now=now, principal=principal, quota=None, error=None)
        try:
            quota.gate(metered, principal, now, heavy=route.heavy, counted=route.counted)
        except Exception as error:     # noqa: BLE001 - a refusal, or storage failing once
            metered.error = error       # counting began: Flask renders it, counting nothing again
            environ[METERED] = metered
            return None
        headers = snapshot_answers.headers(snapshot)
        if metered.quota is not None and metered.quota.plan.capped:
            headers.extend(quota.headers(metered.quota).items())
        return headers, snapshot.body
