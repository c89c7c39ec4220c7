"""GET /statistics: all-time totals for the organization or one exact domain."""
from __future__ import annotations

from flask import Blueprint, g, request

from rules.rates import rate
from store import queries
from webapp import params
from webapp.auth import requires
from webapp.answer_cache import remember

bp = Blueprint("statistics", __name__)


@bp.get("/statistics")
@requires("analytics:read")
def index():
    domain = params.optional_domain(request.args)
    org_id = g.principal.org_id
    totals = remember(("statistics", domain), org_id, lambda: queries.statistics(org_id, domain))
    return {
        "total_reports": totals["total_reports"],
        "total_messages": totals["total_messages"],
        "compliant_messages": totals["compliant_messages"],
        "compliance_rate": rate(totals["compliant_messages"], totals["total_messages"]),
        "unique_source_ips": totals["unique_source_ips"],
        "unique_domains": totals["unique_domains"],
        "has_data": totals["total_reports"] > 0,
    }
