"""The blob lane: a stored snapshot answered below Flask when nothing about the request is unusual.

A snapshot answer is bytes already made, yet Flask's request and response machinery (contexts,
routing, hooks, header objects) costs more than the key check, the metering and the bytes
together. Like a cache in front of an application, this WSGI layer answers a plain GET or HEAD
of /dashboard/overview, /compliance-score or /domains/{domain}/health itself when all it needs
is held in this worker from earlier requests at the same store version (store/versioned.py):
the key, the fresh blob, the domain's monitored check. It authenticates, checks the view's own
permission and meters through the same functions as the Flask path (webapp.auth, webapp.quota),
and sends the same headers.

Everything else goes to Flask untouched: another path or method, a query string, a condition
header, anything not held, a key that would be refused, a permission the key lacks (Flask
meters and answers 403). A request whose metering the lane began and that ended in an error (a
refusal, storage failing) goes to Flask with its verdict and that error, so the one error
handler renders it and the request counts once. On Postgres nothing is held, so every request
takes the Flask path.
"""
from __future__ import annotations

import sqlite3
from types import SimpleNamespace

from peewee import DatabaseError, InterfaceError

from store.versioned import data_version
from webapp import blobs, health, params, quota
from webapp.blobs import CONDITIONS
from webapp.errors import ApiError

# The environ key of a request the lane metered and handed to Flask (webapp.gatekeeper).
METERED = "rua.lane.metered"
# The view of each path the lane answers: their permissions and quota kinds are read from it.
ENDPOINTS = {"overview": "dashboard.overview", "compliance": "scores.score",
             "health": "health.show"}


class Route:
    """One kind of blob the lane serves: the view's permission and the route's quota kind."""

    def __init__(self, app, kind: str):
        endpoint = ENDPOINTS[kind]
        self.kind = kind
        self.permission = app.view_functions[endpoint].permission
        rule = next(app.url_map.iter_rules(endpoint)).rule
        self.heavy, self.counted = quota.route_kind(rule)


class BlobLane:
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
        principal = self.app.extensions["rua.auth"].held(environ.get("HTTP_AUTHORIZATION"), now,
                                                         version)
        if principal is None or not principal.allows(route.permission):
            return None
        org_id = principal.org_id
        if route.kind == "health" and not health.held_monitored(org_id, variant, version):
            return None
        blob = blobs.held(org_id, route.kind, variant, now, version)
        if blob is None:
            return None
        metered = SimpleNamespace(now=now, principal=principal, quota=None, error=None)
        try:
            quota.gate(metered, principal, now, heavy=route.heavy, counted=route.counted)
        except Exception as error:     # noqa: BLE001 - a refusal, or storage failing once
            metered.error = error       # counting began: Flask renders it, counting nothing again
            environ[METERED] = metered
            return None
        headers = blobs.headers(blob)
        if metered.quota is not None and metered.quota.plan.capped:
            headers.extend(quota.headers(metered.quota).items())
        return headers, blob.body
