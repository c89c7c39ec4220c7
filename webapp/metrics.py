"""GET /metrics: Prometheus' text format, at the site root, when RUA_METRICS is on.

No API key and not metered; with RUA_METRICS_TOKEN_FILE it asks for its own bearer token
(compared in constant time; never logged, since the request log names no header). Each scrape
adds up the workers' own counters (webapp/instruments.py; every worker's file under gunicorn)
and reads the store's figures once (webapp/store_metrics.py).
"""
from __future__ import annotations

import glob
import hmac
import os
import pathlib

from flask import Blueprint, Response, current_app, request
from prometheus_client import CollectorRegistry, generate_latest, multiprocess
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from webapp import instruments
from webapp.errors import error_response
from webapp.request_checks import public
from webapp.store_metrics import StoreCollector

bp = Blueprint("metrics", __name__)
PATH = "/metrics"
EXTENSION = "rua.metrics"
# The classic text format, which every Prometheus 2 and 3 reads.
TEXT_FORMAT = CONTENT_TYPE_PLAIN_0_0_4
# Set by deploy/gunicorn.conf.py when metrics are on: each worker's counters live in a file there.
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"


class Exposition:
    """What /metrics serves: the expected Authorization header (None: no token) and the store's
    collector, registered once."""

    def __init__(self, token: str | None, clock):
        self.expected = None if token is None else f"Bearer {token}".encode()
        self.store = CollectorRegistry(auto_describe=False)
        self.store.register(StoreCollector(clock))

    def allows(self, header: str | None) -> bool:
        if self.expected is None:
            return True
        return hmac.compare_digest((header or "").encode(), self.expected)

    def text(self) -> bytes:
        return generate_latest(_workers()) + generate_latest(self.store)


def _workers() -> CollectorRegistry:
    """Every worker's counters under gunicorn, else this process's own."""
    folder = os.environ.get(MULTIPROCESS)
    if not folder:
        return instruments.REGISTRY
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WorkersFiles(folder))
    return registry


class WorkersFiles:
    """The workers' counter files merged, as prometheus_client's MultiProcessCollector does,
    but for a file still empty: a worker creates its file before it sizes it, and reading one
    then fails the whole scrape (prometheus/client_python#1199); one left empty by a worker
    killed in between would fail every scrape after. An empty file holds no count yet."""

    def __init__(self, folder: str):
        self.folder = folder

    def collect(self):
        files = [path for path in glob.glob(os.path.join(self.folder, "*.db"))
                 if _size(path) > 0]
        return multiprocess.MultiProcessCollector.merge(files, accumulate=True)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except FileNotFoundError:       # a gauge's file removed as its worker ended
        return 0


def read_token(path: str) -> str | None:
    """The token in RUA_METRICS_TOKEN_FILE (None when unset); an unreadable or empty file stops
    the app at start-up rather than serving metrics unprotected."""
    if not path:
        return None
    try:
        token = pathlib.Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError) as error:
        raise RuntimeError(f"RUA_METRICS_TOKEN_FILE: cannot read {path}: "
                           f"{error.strerror or error}") from None
    if not token:
        raise RuntimeError(f"RUA_METRICS_TOKEN_FILE: {path} is empty")
    return token


@bp.get(PATH)
@public
def metrics():
    exposition = current_app.extensions[EXTENSION]
    if not exposition.allows(request.headers.get("Authorization")):
        return error_response(401, "invalid_metrics_token",
                              {"WWW-Authenticate": 'Bearer realm="rua metrics"'})
    return Response(exposition.text(), mimetype=None, content_type=TEXT_FORMAT,
                    headers={"Cache-Control": "no-store"})


def enable(app, config) -> None:
    """Ready /metrics for `app` (its blueprint is registered by the factory)."""
    token = read_token(config.metrics_token_file)
    app.extensions[EXTENSION] = Exposition(token, app.config["RUA_CLOCK"])
