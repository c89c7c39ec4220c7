"""GET /events: the attention feed, newest first, by day of creation and handled state."""
from __future__ import annotations

from flask import Blueprint, g, request

from store import event_queries as queries
from store.alert_types import LABELS
from webapp import params
from webapp.auth import requires
from webapp.paging import envelope

bp = Blueprint("events", __name__)


def event_row(row) -> dict:
    """A row of queries.FIELDS as the contract's Event; a cleared condition counts as handled."""
    (id_, type_, severity, title, detail, domain, link, acknowledged, cleared_at,
     created_at) = row
    return {"id": id_, "type": type_, "type_label": LABELS.get(type_, type_),
            "severity": severity, "title": title, "detail": detail, "domain": domain,
            "link": link, "acknowledged": bool(acknowledged) or cleared_at is not None,
            "created_at": created_at}


@bp.get("/events")
@requires("alert:read")
def index():
    args, org_id = request.args, g.principal.org_id
    wanted = queries.EventFilter(first=params.day(args, "from"), last=params.day(args, "to"),
                                 handled=params.boolean(args, "acknowledged"))
    return envelope("events", None, params.page(args),
                    rows=lambda page: [event_row(r) for r in
                                       queries.page(org_id, wanted, page.limit, page.offset)],
                    count=lambda: queries.count(org_id, wanted))
