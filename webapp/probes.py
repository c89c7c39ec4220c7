"""GET /healthz and GET /readyz: probes for load balancers and monitors, outside the API.

No key, not metered, never cached. /healthz says the process answers and touches nothing;
/readyz says whether this node can serve: the store answers and its schema is current (503 with
the reason otherwise). When the scheduler's jobs last ran is in /readyz's body for a monitor to
judge, but a late scheduler does not take a web node out of rotation.
"""
from __future__ import annotations

from flask import Blueprint, Response
from peewee import DatabaseError, InterfaceError

from store import db, job_runs
from store.encoding import dumps
from store.migrations import current_version, latest_version
from webapp.errors import UNAVAILABLE
from webapp.request_checks import public

bp = Blueprint("probes", __name__)   # served at the site root (webapp/__init__.py)
PATHS = ("/healthz", "/readyz")


def _answer(status: int, body: dict) -> Response:
    return Response(dumps(body), status=status, mimetype="application/json",
                    headers={"Cache-Control": "no-store"})


@bp.get("/healthz")
@public
def healthz():
    return _answer(200, {"status": "ok"})


@bp.get("/readyz")
@public
def readyz():
    try:
        with db.connection_context():
            version = current_version(db)
            runs = job_runs.last_runs() if version >= latest_version() else []
    except (DatabaseError, InterfaceError, *UNAVAILABLE):
        return _answer(503, {"status": "unavailable", "reason": "the store does not answer"})
    if version < latest_version():
        reason = (f"the store's schema is at version {version} of {latest_version()}: "
                  "run `rua init`")
        return _answer(503, {"status": "unavailable", "reason": reason,
                             "schema_version": version})
    return _answer(200, {"status": "ready", "schema_version": version,
                         "scheduler": scheduler(runs)})


def scheduler(runs) -> dict:
    """When each job last started and finished, and how it ended; null before any run."""
    jobs = [{"name": run.name, "started_at": run.started_at, "finished_at": run.finished_at,
             "ok": run.ok, "runs": run.runs, "failures": run.failures} for run in runs]
    last = max((run.started_at for run in runs), default=None)
    return {"last_run_at": last, "jobs": jobs}
