"""GET /events: the attention feed, newest first, by day of creation and handled state."""
from __future__ import annotations

from flask import Blueprint, g, request

from store import event_queries as queries
from webapp import params
from webapp.auth import requires
from webapp.paging import envelope

bp = Blueprint("events", __name__)


@bp.get("/events")
@requires("alert:read")
def index():
    args, org_id = request.args, g.principal.org_id
    wanted = queries.EventFilter(first=params.day(args, "from"), last=params.day(args, "to"),
                                 handled=params.boolean(args, "acknowledged"))
    return envelope("events", None, params.page(args),
                    rows=lambda page: [queries.shape(r) for r in
                                       queries.page(org_id, wanted, page.limit, page.offset)],
                    count=lambda: queries.count(org_id, wanted))
