"""GET /statistics: all-time totals for the organization or one exact domain."""
from __future__ import annotations

from flask import Blueprint, g, request

from store import queries
from webapp import params
from webapp.auth import requires
from webapp.memo import remember

bp = Blueprint("statistics", __name__)


def rate(part: int, whole: int) -> float:
    """A percentage 0-100 rounded to 2 decimals; 0 when there is nothing to divide."""
    return round(100.0 * part / whole, 2) if whole else 0.0


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
