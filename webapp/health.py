"""GET /domains/{domain}/health: one monitored domain's health (the heavy route)."""
from __future__ import annotations

from flask import Blueprint, g

from store.models import Domain
from webapp import params
from webapp.auth import requires
from webapp.blobs import fetch, serve
from webapp.errors import ApiError

bp = Blueprint("health", __name__)


@bp.get("/domains/<path:domain>/health")
@requires("domain:read")
def show(domain):
    name = params.domain(domain)
    # Asked on every request, not only when the blob is missing: a domain removed since the
    # last refresh must not keep answering from its old blob.
    if not Domain.select().where(Domain.org == g.principal.org_id, Domain.name == name).exists():
        raise ApiError(404, "domain_not_monitored")
    return serve(fetch("health", name))
