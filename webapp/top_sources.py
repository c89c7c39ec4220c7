"""GET /top-sources: sending IPs by message volume, from the daily rollups."""
from __future__ import annotations

from flask import Blueprint, g, request

from store import queries
from webapp import params
from webapp.auth import requires
from webapp.answer_cache import remember
from webapp.paging import window
from webapp.responses import csv_download, with_more

bp = Blueprint("top_sources", __name__)
CSV_COLUMNS = ("source_ip", "count", "pass", "fail")


def source_shape(row, service) -> dict:
    """(ip, count, pass, spf_fail, dkim_fail) and what is known of the sender."""
    ip, count, passed, spf_fail, dkim_fail = row
    shape = {"source_ip": ip, "count": int(count), "pass": int(passed),
             "fail": int(count) - int(passed), "spf_fail": int(spf_fail),
             "dkim_fail": int(dkim_fail)}
    if service is not None:
        name, icon, slug = service
        shape.update(service_name=name, service_icon=icon or "", service_slug=slug or "")
    return shape


@bp.get("/top-sources")
@requires("analytics:read")
def index():
    args, org_id = request.args, g.principal.org_id
    domain = params.optional_domain(args)
    page = params.page(args, default=10)
    # All sources are aggregated once per report version (a GROUP BY over the rollups); pages slice them.
    every = remember(("top_sources", domain), org_id, lambda: queries.top_sources(org_id, domain))
    body = window("sources", every, page)
    services = queries.source_services(org_id, [row[0] for row in body["sources"]])
    body["sources"] = [source_shape(row, services.get(row[0])) for row in body["sources"]]
    if params.choice(args, "format", ("csv",), None) == "csv":
        answer = csv_download(body["sources"], CSV_COLUMNS, "top-sources.csv")
        return with_more(answer, page, body["total"])
    return body
