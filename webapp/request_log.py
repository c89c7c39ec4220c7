"""One log line per request, and the request id every answer carries (X-Request-Id).

The id is the client's own X-Request-Id when it is well formed (a proxy's, say), otherwise a new
ULID; error bodies' logs use the same one (webapp/errors.py). The line names the method, the
path without its query, the status and the time taken: never a header, so never a key.
"""
from __future__ import annotations

import logging
import re
import time

from ingest.printable import printable
from store.ids import new_ulid
from webapp import instruments

log = logging.getLogger("rua.request")

ENVIRON_KEY = "rua.request_id"
HEADER = "X-Request-Id"
WELL_FORMED = re.compile(r"[A-Za-z0-9._-]{1,64}")
PATH_CUT = 300


def request_id(environ) -> str:
    """The request's id: the one already chosen, the client's well-formed one, or a new one."""
    chosen = environ.get(ENVIRON_KEY)
    if chosen:
        return chosen
    sent = environ.get("HTTP_X_REQUEST_ID", "")
    chosen = sent if WELL_FORMED.fullmatch(sent) else new_ulid()
    environ[ENVIRON_KEY] = chosen
    return chosen


class RequestLog:
    """WSGI middleware around the whole app (snapshot fast path included). With `routes` (RUA_METRICS
    on), each request is also counted by its route template (webapp/instruments.py)."""

    def __init__(self, app, routes: instruments.Routes | None = None):
        self.app = app
        self.routes = routes

    def __call__(self, environ, start_response):
        started = time.perf_counter()
        rid = request_id(environ)
        seen = {}

        def start(status, headers, exc_info=None):
            seen["status"] = status
            if self.routes is not None:
                # Counted before the first byte leaves: a client that has its answer finds
                # it counted, whichever worker answers its next scrape.
                seen["route"] = self.routes.name(environ)
                instruments.count(seen["route"], _code(status))
            if not any(name.lower() == "x-request-id" for name, _ in headers):
                headers.append((HEADER, rid))
            return start_response(status, headers, exc_info)

        body = self.app(environ, start)
        return _Logged(body, environ, seen, started, self.routes)


class _Logged:
    """The body as the app made it, logged when the server closes it (after the last byte)."""

    def __init__(self, body, environ, seen, started, routes):
        self.body, self.environ, self.seen, self.started = body, environ, seen, started
        self.routes = routes

    def __iter__(self):
        return iter(self.body)

    def close(self):
        try:
            close = getattr(self.body, "close", None)
            if close is not None:
                close()
        finally:
            seconds = time.perf_counter() - self.started
            write_line(self.environ, _code(self.seen.get("status", "500")), seconds)
            if "route" in self.seen:
                instruments.timed(self.seen["route"], seconds)


def _code(status: str) -> int:
    return int(status.split(" ", 1)[0])


def write_line(environ, code: int, seconds: float) -> None:
    milliseconds = round(seconds * 1000, 1)
    method = environ.get("REQUEST_METHOD", "")
    # A path is the client's text: escaped, so one request stays one line.
    path = printable(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""))[:PATH_CUT]
    rid = environ[ENVIRON_KEY]
    log.info("%s %s %s %sms request_id=%s", method, path, code, milliseconds, rid,
             extra={"method": method, "path": path, "status": code, "ms": milliseconds,
                    "request_id": rid})
