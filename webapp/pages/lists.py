"""The list pages and their details: reports, sources, TLS reports, events, usage. Each calls
the API's own view function for the same key and the same query (so a page's numbers are the
API's, and a download link on a page is the API's download)."""
from __future__ import annotations

from flask import Response

from store import report_queries
from store.encoding import loads
from webapp import events as events_api
from webapp import reports as reports_api
from webapp import sources as sources_api
from webapp import tls_reports as tls_api
from webapp import usage as usage_api
from webapp.auth import requires
from webapp.pages import charts
from webapp.pages.params import sorted_by, with_args
from webapp.pages.site import bp, page, render
from webapp.report_detail import detail_chunks

RECORDS_SHOWN = 200       # a report's records on its page; the API's detail has all of them


def _listing(template: str, title: str, answer, **context):
    """A list page from the API's answer (a dict), or the API's download when one was asked."""
    if isinstance(answer, Response):
        return answer
    return render(template, title=title, body=answer, with_args=with_args, sorted_by=sorted_by,
                  **context)


@bp.get("/reports")
@page("/reports")
@requires("report:read")
def reports():
    return _listing("pages/reports.html", "Reports", reports_api.answer(),
                    sorts=reports_api.SORTS)


@bp.get("/reports/<id>")
@page("/reports/<id>")
@requires("report:read")
def report(id):
    org_id, report_id, row = reports_api.found(id)
    records = report_queries.RecordPages(org_id, report_id, size=RECORDS_SHOWN)
    # The API's detail body, made from the first page of records only.
    detail = loads(b"".join(detail_chunks(row, [records.first])))
    return render("pages/report.html", title=f"Report {row.report_id}", id=report_id,
                  detail=detail, more=not records.single, shown=RECORDS_SHOWN)


@bp.get("/sources")
@page("/sources")
def sources():
    return _listing("pages/sources.html", "Sources", sources_api.answer())


@bp.get("/sources/<ip>")
@page("/sources/<ip>")
def source(ip):
    body = sources_api.detail(ip, timeline=False)
    return render("pages/source.html", title=f"Source {body['source_ip']}", source=body)


@bp.get("/tls-reports")
@page("/tls-reports")
def tls_reports():
    return _listing("pages/tls_reports.html", "TLS reports", tls_api.index())


@bp.get("/events")
@page("/events")
def events():
    return _listing("pages/events.html", "Events", events_api.index())


@bp.get("/usage")
@page("/api-keys/usage")
def usage():
    body = usage_api.show()
    shown = "%Y-%m-%d %H:00" if body["bucket"] == "hour" else "%Y-%m-%d"
    chart = charts.stacked_bars(
        f"Requests per {body['bucket']}, last {body['days']} days",
        [p["ts"].strftime(shown) for p in body["points"]], [p["allowed"] for p in body["points"]],
        [p["rejected"] for p in body["points"]], "requests", ("allowed", "refused"))
    return render("pages/usage.html", title="Usage", usage=body, requests_chart=chart)
