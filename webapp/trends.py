"""GET /trends: the last `days` days of one stored 365-day series, organization or domain."""
from __future__ import annotations

from flask import Blueprint, g, request

from snapshotter import series
from snapshotter.trends import last_day, trend_points
from store.encoding import dumps
from webapp import params
from webapp.auth import requires
from webapp.snapshot_answers import fetch, org_has_domain, respond

bp = Blueprint("trends", __name__)


@bp.get("/trends")
@requires("analytics:read")
def index():
    domain = params.optional_domain(request.args)
    days = params.days(request.args, default=30, lo=1, hi=365)
    known = None if domain is None else (lambda: org_has_domain(g.principal.org_id, domain))
    snapshot = fetch("trends", domain or "", exists=known)
    if snapshot is None:     # a valid domain without data: zeros for every day
        end = last_day(g.now.date())
        return respond(series.envelope(days, dumps(trend_points({}, end, days))))
    body = series.envelope(days, series.last(snapshot.body, days))
    return respond(body, None, snapshot.computed_at)
