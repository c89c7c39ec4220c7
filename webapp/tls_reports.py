"""GET /tls-reports (list, filters, sorts) and /tls-reports/{id} (the report as received)."""
from __future__ import annotations

from datetime import datetime, timedelta

import orjson
from flask import Blueprint, Response, g, request

from store import tls_queries as queries
from store.encoding import dumps
from webapp import params
from webapp.auth import requires
from webapp.errors import ApiError
from webapp.paging import envelope
from webapp.report_detail import attested

bp = Blueprint("tls_reports", __name__)
SORTS = tuple(queries.TLS_SORTS)
_EPOCH = datetime(1970, 1, 1)      # naive UTC, as the store keeps times


def tls_summary(row) -> dict:
    """One TLS report of the list in the contract's shape."""
    return {"id": row.id, "report_id": row.report_id, "org_name": row.org_name,
            "policy_domains": row.policy_domains,
            "date_begin": _EPOCH + timedelta(seconds=row.date_begin),
            "date_end": _EPOCH + timedelta(seconds=row.date_end),
            "received_at": row.received_at,
            "successful_sessions": row.successful_sessions,
            "failed_sessions": row.failed_sessions, "success_rate": row.success_rate,
            "authenticity": row.authenticity, "signed_by": row.signed_by}


def tls_filter(args) -> queries.TlsFilter:
    return queries.TlsFilter(
        domain=params.optional_domain(args),
        result=params.choice(args, "result", ("pass", "fail"), None),
        day_from=params.day(args, "from"),
        day_to=params.day(args, "to"),
        sort_by=params.choice(args, "sort_by", SORTS, "date_end"),
        descending=params.descending(args),
        authenticity=params.authenticity(args),
    )


@bp.get("/tls-reports")
@requires("report:read")
def index():
    args, org_id = request.args, g.principal.org_id
    wanted = tls_filter(args)
    body = envelope("tls_reports", None, params.page(args), tls_summary,
                    count=lambda: queries.tls_total(org_id, wanted),
                    rows=lambda p: queries.tls_page(org_id, wanted, p.limit, p.offset))
    body["has_any"] = body["total"] > 0 or queries.has_any(org_id)
    return body


@bp.get("/tls-reports/<id>")
@requires("report:read")
def show(id):
    row = queries.tls_report(g.principal.org_id, params.ulid(id))
    if row is None:
        raise ApiError(404, "report_not_found")
    return Response(dumps(detail(row)), mimetype="application/json")


def detail(row) -> dict:
    """The report as received, RFC 8460's keys in RFC 8460's order, plus parse_warnings and
    what its mail proves."""
    received = orjson.loads(row.body)
    shown = {key: received.get(key) for key in ("organization-name", "date-range",
                                                "contact-info", "report-id")}
    shown["policies"] = received.get("policies") or []
    return {**shown, "parse_warnings": row.parse_warnings, **attested(row)}
