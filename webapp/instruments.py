"""The web process's own metrics: requests by route and status, their time, quota refusals.

Counted in the worker that answered. Under gunicorn with RUA_METRICS on, PROMETHEUS_MULTIPROC_DIR
(deploy/gunicorn.conf.py) makes prometheus_client keep each worker's figures in a file of its
own, and /metrics adds them up (webapp/metrics.py), so every worker's requests are counted.
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram
from werkzeug.exceptions import HTTPException, MethodNotAllowed

REGISTRY = CollectorRegistry(auto_describe=True)
# A path no route matches: one label value for every such path, so a scan of random paths
# cannot grow the number of series.
UNMATCHED = "unmatched"

REQUESTS = Counter("rua_http_requests", "HTTP requests answered, by route template and status.",
                   ("route", "status"), registry=REGISTRY)
LATENCY = Histogram("rua_http_request_duration_seconds",
                    "Time from the request's arrival to its last byte, by route template.",
                    ("route",), registry=REGISTRY)
REFUSALS = Counter("rua_quota_refusals", "Requests refused with 429, by error code.",
                   ("code",), registry=REGISTRY)


class Routes:
    """Names a request by the template of the rule that serves it (`/api/v1/reports/<id>`)."""

    def __init__(self, url_map):
        self.url_map = url_map

    def name(self, environ) -> str:
        adapter = self.url_map.bind_to_environ(environ)
        try:
            rule, _ = adapter.match(return_rule=True)
        except MethodNotAllowed:
            # The path exists for GET: a 405 is counted under its route.
            return self._name_for_get(adapter)
        except HTTPException:
            return UNMATCHED
        return rule.rule

    @staticmethod
    def _name_for_get(adapter) -> str:
        try:
            rule, _ = adapter.match(method="GET", return_rule=True)
        except HTTPException:
            return UNMATCHED
        return rule.rule


def observe(route: str, status: int, seconds: float) -> None:
    REQUESTS.labels(route, str(status)).inc()
    LATENCY.labels(route).observe(seconds)


def refused(code: str) -> None:
    """A 429 was answered (webapp/errors.py renders every one, snapshot lane's included)."""
    REFUSALS.labels(code).inc()
