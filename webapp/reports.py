"""GET /reports (list, filters, downloads), /reports/date-range and /reports/{id}."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from flask import Blueprint, Response, g, request

from store import report_queries as queries
from store.clock import stored_instant
from store.encoding import dumps
from webapp import params
from webapp.auth import requires
from webapp.connections import streamed
from webapp.errors import ApiError
from webapp.answer_cache import remember, report_version
from webapp.paging import envelope
from webapp.report_detail import detail_chunks
from webapp.responses import csv_download, json_download, with_more

bp = Blueprint("reports", __name__)
SORTS = tuple(queries.REPORT_SORTS)
DOWNLOADS = ("csv", "json")        # format=: the page as a file, made afresh each time
CSV_COLUMNS = ("id", "report_id", "org_name", "domain", "total_messages", "compliant_messages",
               "compliance_rate", "policy_p", "date_begin", "date_end")


def report_summary(row: queries.SummaryRow) -> dict:
    """One row of the report list in the contract's shape."""
    return {"id": row.id, "report_id": row.report_id, "org_name": row.org_name,
            "domain": row.domain, "total_messages": row.total_messages,
            "compliant_messages": row.compliant_messages,
            "compliance_rate": row.compliance_rate, "policy_p": row.policy_p,
            "date_begin": _EPOCH + timedelta(seconds=row.date_begin),
            "date_end": _EPOCH + timedelta(seconds=row.date_end),
            "received_at": stored_instant(row.received_at),
            "authenticity": row.authenticity, "signed_by": row.signed_by}


def csv_row(row: queries.SummaryRow) -> dict:
    """The CSV subset of a summary: no received_at nor authenticity, the window as UTC days."""
    return {**report_summary(row), "date_begin": _day(row.day_begin),
            "date_end": _day(row.day_end)}


_EPOCH = datetime(1970, 1, 1)      # naive UTC, as store.clock.from_epoch, without its cost


def _day(value) -> str:
    return value[:10] if isinstance(value, str) else value.isoformat()


def report_filter(args) -> queries.ReportFilter:
    return queries.ReportFilter(
        domain=params.text(args, "domain"),
        org_name=params.text(args, "org"),
        result=params.choice(args, "result", ("pass", "fail"), None),
        source_ip=params.text(args, "source_ip"),
        day_from=params.day(args, "from"),
        day_to=params.day(args, "to"),
        search=params.search(args),
        sort_by=params.choice(args, "sort_by", SORTS, "date_end"),
        descending=params.descending(args),
        authenticity=params.authenticity(args),
    )


@bp.get("/reports")
@requires("report:read")
def index():
    """The list's JSON, remembered until the organization's reports change (its report
    version); a download is made afresh."""
    args, org_id = request.args, g.principal.org_id
    key = ("reports page", _with_domains(org_id, report_filter(args)), params.page(args))
    if params.choice(args, "format", DOWNLOADS, None) is not None:
        return answer()
    body = remember(key, org_id, lambda: dumps(answer()), kept="pages")
    return Response(body, mimetype="application/json")


def answer():
    """The request's GET /reports body (the reports page's too), or the download it asks for."""
    args, org_id = request.args, g.principal.org_id
    wanted = _with_domains(org_id, report_filter(args))
    page = params.page(args)
    download = params.choice(args, "format", DOWNLOADS, None)
    if download is not None:
        rows = queries.report_rows(org_id, wanted, page.limit, page.offset)
        if download == "csv":
            answer = csv_download([csv_row(r) for r in rows], CSV_COLUMNS, "reports.csv")
        else:
            answer = json_download([report_summary(r) for r in rows], "reports.json")
        return with_more(answer, page, _total(org_id, wanted))
    body = envelope("reports", None, page, report_summary, count=lambda: _total(org_id, wanted),
                    rows=lambda p: queries.report_rows(org_id, wanted, p.limit, p.offset))
    # The report version is 0 before any report.
    body["has_any"] = body["total"] > 0 or report_version(org_id) > 0
    return body


def _with_domains(org_id: str, wanted: queries.ReportFilter) -> queries.ReportFilter:
    """The domain substring as the exact policy domains it matches, so indexes serve it."""
    if not wanted.domain:
        return wanted
    term = wanted.domain
    domains = remember(("domains", term), org_id, lambda: queries.matching_domains(org_id, term))
    return replace(wanted, domains=domains)


def _total(org_id: str, wanted: queries.ReportFilter) -> int:
    key = ("reports", wanted.count_key)
    return remember(key, org_id, lambda: queries.report_total(org_id, wanted))


@bp.get("/reports/date-range")
@requires("report:read")
def date_range():
    earliest, latest = queries.report_date_range(g.principal.org_id)
    return {"earliest": earliest, "latest": latest}


def found(id: str) -> tuple[str, str, queries.DetailRow]:
    """(org, canonical id, row) of the caller's report with this id; 400 invalid_id when it is
    not an id, 404 report_not_found when the organization has no such report."""
    org_id, report_id = g.principal.org_id, params.ulid(id)
    row = queries.report(org_id, report_id)
    if row is None:
        raise ApiError(404, "report_not_found")
    return org_id, report_id, row


@bp.get("/reports/<id>")
@requires("report:read")
def show(id):
    org_id, report_id, row = found(id)
    pages = queries.RecordPages(org_id, report_id)
    body = detail_chunks(row, pages)
    if pages.single:        # answered whole, with its length: one write to the client
        return Response(b"".join(body), mimetype="application/json")
    # Streamed: a report of 150,000 records would otherwise be built whole in the worker.
    return Response(streamed(body), mimetype="application/json")
