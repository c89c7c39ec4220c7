"""One exception and one body builder for every error the API answers."""
from __future__ import annotations

import logging

import peewee
from flask import Flask, Response, current_app, request
from playhouse.pool import MaxConnectionsExceeded
from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.http import HTTP_STATUS_CODES

from store.encoding import dumps
from webapp import connections, instruments, request_log

log = logging.getLogger("rua.webapp")

ALLOW = "GET, HEAD"
# Storage that cannot be reached, is locked past its timeout, or ran out of pooled
# connections is transient: 503 asks the client to retry. psycopg2 errors reach us wrapped
# in peewee's classes; the raw ones are listed too for errors raised outside a query.
try:
    import psycopg2
    _PG_UNAVAILABLE: tuple = (psycopg2.OperationalError, psycopg2.InterfaceError)
except ImportError:  # SQLite-only installs
    _PG_UNAVAILABLE = ()
UNAVAILABLE = ((peewee.OperationalError, peewee.InterfaceError, MaxConnectionsExceeded)
               + _PG_UNAVAILABLE)


class ApiError(Exception):
    """An error answer: status, machine code, optional headers and extra body fields."""

    def __init__(self, status: int, code: str, *, headers: dict | None = None, **extra):
        super().__init__(code)
        self.status = status
        self.code = code
        self.headers = headers or {}
        self.extra = extra


def body(status: int, code: str, **extra) -> bytes:
    """The standard error body: {"error": title-cased reason, "code": ..., **extra}."""
    return dumps({"error": HTTP_STATUS_CODES.get(status, "Error"), "code": code, **extra})


def error_response(status: int, code: str, headers: dict | None = None, **extra) -> Response:
    return Response(body(status, code, **extra), status=status, headers=headers,
                    mimetype="application/json")


def _api_error(exc: ApiError) -> Response:
    if exc.status == 429:
        instruments.refused(exc.code)
    return error_response(exc.status, exc.code, exc.headers, **exc.extra)


def _http_error(exc: HTTPException) -> Response:
    if isinstance(exc, MethodNotAllowed):
        response = Response(status=405, headers={"Allow": ALLOW})
        del response.headers["Content-Type"]     # no body, so no type to announce
        return response
    status = exc.code or 500
    if status == 404 or status < 400:
        # No such path, or a slash redirect werkzeug offers: either way not documented.
        return error_response(404, "route_not_found")
    return error_response(status, HTTP_STATUS_CODES.get(status, "error").lower().replace(" ", "_"))


def render(exc: Exception, environ) -> Response:
    """The answer to an error met while answering the request of this WSGI environ: a refusal
    (ApiError), storage failing (503) or anything unexpected (500)."""
    if isinstance(exc, ApiError):
        return _api_error(exc)
    rid = request_log.request_id(environ)
    if isinstance(exc, UNAVAILABLE):
        log.warning("storage unavailable request_id=%s %s: %s", rid, type(exc).__name__, exc)
        return error_response(503, "storage_unavailable",
                              {"Retry-After": "1", "X-Request-Id": rid})
    # The traceback goes to the log under the request id, never into the body.
    log.error("internal error request_id=%s %s %s", rid, environ.get("REQUEST_METHOD"),
              environ.get("PATH_INFO"), exc_info=exc)
    return error_response(500, "internal_error", {"X-Request-Id": rid})


def _unexpected(exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        return _http_error(exc)
    if isinstance(exc, UNAVAILABLE):
        connections.drop_failed(current_app)
    return render(exc, request.environ)


def register(app: Flask) -> None:
    app.register_error_handler(ApiError, _api_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
