"""GET /domains: the organization's monitored domains, paged."""
from __future__ import annotations

from flask import Blueprint, g, request

from store import queries, tls_queries
from webapp import params
from webapp.auth import requires
from webapp.answer_cache import remember
from webapp.paging import envelope

bp = Blueprint("domains", __name__)
VERIFIED_STATES = frozenset({"verified", "verified_inherited"})


def domain_shape(row, report_count: int, tls_report_count: int = 0) -> dict:
    """One monitored domain in the contract's shape."""
    verified = row.dmarc_state in VERIFIED_STATES
    shape = {
        "id": row.id,
        "domain": row.name,
        "verified": verified,
        "dmarc_state": row.dmarc_state,
        "tlsrpt_enabled": row.tlsrpt_enabled,
        "tlsrpt_state": row.tlsrpt_state,
        "forensic_enabled": row.forensic_enabled,
        "forensic_state": row.forensic_state,
        "source": row.source,
        "verified_source": row.verified_source if verified else "",
        "report_count": report_count,
        "tls_report_count": tls_report_count,
        "verified_at": row.verified_at,
    }
    if shape["verified_source"] == "inherited":
        shape["inherited_from"] = row.inherited_from
    return shape


@bp.get("/domains")
@requires("domain:read")
def index():
    org_id = g.principal.org_id
    page = params.page(request.args)
    body = envelope("domains", queries.domain_page(org_id), page)
    counts = remember(("report_counts",), org_id, lambda: queries.report_counts(org_id))
    # Not remembered: the answer cache's version moves with DMARC reports only, and TlsDay is small.
    tls = tls_queries.report_counts(org_id)
    body["domains"] = [domain_shape(row, counts.get(row.name, 0), tls.get(row.name, 0))
                       for row in body["domains"]]
    return body
