"""The web process's own metrics: requests by route and status, their time, quota refusals.

Counted in the worker that answered. Under gunicorn with RUA_METRICS on, PROMETHEUS_MULTIPROC_DIR
(deploy/gunicorn.conf.py) makes prometheus_client keep each worker's figures in a file of its
own, and /metrics adds them up (webapp/metrics.py), so every worker's requests are counted.
"""
from __future__ import annotations

import functools

from prometheus_client import CollectorRegistry, Counter, Histogram
from werkzeug.exceptions import HTTPException, MethodNotAllowed

REGISTRY = CollectorRegistry(auto_describe=True)
# A path no route matches: one label value for every such path, so a scan of random paths
# cannot grow the number of series.
UNMATCHED = "unmatched"
LONGEST_REMEMBERED = 300

REQUESTS = Counter("rua_http_requests", "HTTP requests answered, by route template and status.",
                   ("route", "status"), registry=REGISTRY)
LATENCY = Histogram("rua_http_request_duration_seconds",
                    "Time from the request's arrival to its last byte, by route template.",
                    ("route",), registry=REGISTRY)
REFUSALS = Counter("rua_quota_refusals", "Requests refused with 429, by error code.",
                   ("code",), registry=REGISTRY)


class Routes:
    """Names a request by the template of the rule that serves it (`/api/v1/reports/<id>`).

    The names of recent paths are kept (a bounded cache): matching a path against every rule
    costs more than the snapshot fast path's whole answer, and most requests repeat a path."""

    def __init__(self, url_map, remembered: int = 4096):
        self.url_map = url_map
        self._named = functools.lru_cache(maxsize=remembered)(self._match)

    def name(self, environ) -> str:
        key = (environ.get("SCRIPT_NAME", ""), environ.get("PATH_INFO", ""),
               environ.get("REQUEST_METHOD", "GET"))
        if len(key[1]) > LONGEST_REMEMBERED:
            return self._match(*key)        # a long path is matched, not kept: bounded memory
        return self._named(*key)

    def _match(self, script_name: str, path: str, method: str) -> str:
        adapter = self.url_map.bind("rua", script_name=script_name or "/")
        try:
            rule, _ = adapter.match(path, method=method, return_rule=True)
        except MethodNotAllowed:
            # The path exists for GET: a 405 is counted under its route.
            if method == "GET":
                return UNMATCHED
            return self._match(script_name, path, "GET")
        except HTTPException:
            return UNMATCHED
        return rule.rule


def count(route: str, status: int) -> None:
    """A request is answered (called as its answer starts)."""
    REQUESTS.labels(route, str(status)).inc()


def timed(route: str, seconds: float) -> None:
    """A request's answer is sent, its last byte `seconds` after the request arrived."""
    LATENCY.labels(route).observe(seconds)


def refused(code: str) -> None:
    """A 429 was answered (webapp/errors.py renders every one, snapshot fast path's included)."""
    REFUSALS.labels(code).inc()
