"""GET /dashboard/overview: the organization's health, domain cards and action item counts."""
from __future__ import annotations

from flask import Blueprint

from webapp.auth import requires
from webapp.snapshot_answers import fetch, serve

bp = Blueprint("dashboard", __name__)


@bp.get("/dashboard/overview")
@requires("analytics:read")
def overview():
    return serve(fetch("overview"))
