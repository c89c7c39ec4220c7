"""GET /compliance-score (organization or one domain) and /compliance-score/history."""
from __future__ import annotations

from datetime import timedelta

from flask import Blueprint, g, request

from rules.scores import unknown_domain_compliance
from snapshotter import series
from store.encoding import dumps
from webapp import params
from webapp.auth import requires
from webapp.snapshot_answers import fetch, org_has_domain, respond, serve

bp = Blueprint("scores", __name__)


@bp.get("/compliance-score")
@requires("analytics:read")
def score():
    domain = params.optional_domain(request.args)
    if domain is None:
        return serve(fetch("compliance"))
    snapshot = fetch("compliance", domain,
                     exists=lambda: org_has_domain(g.principal.org_id, domain))
    if snapshot is None:
        return respond(dumps(unknown_domain_compliance(domain)))
    return serve(snapshot)


@bp.get("/compliance-score/history")
@requires("analytics:read")
def history():
    days = params.days(request.args, default=30, lo=1, hi=365)
    snapshot = fetch("history")
    first = (g.now.date() - timedelta(days=days - 1)).isoformat()
    body = series.envelope(days, series.since(snapshot.body, first))
    return respond(body, None, snapshot.computed_at)
