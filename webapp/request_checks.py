"""The one before-request step: route (404/405), connection, who is calling (401), then metering."""
from __future__ import annotations

from flask import current_app, g, request

from webapp import connections, quota


def public(view):
    """Mark a view that needs no API key: the OpenAPI document, the catalog and the docs need no
    store either; the pages (webapp/pages) open it and check their own session."""
    view.public = True
    return view


def check_request():
    # One hook, and each context object looked up once: every API request runs this.
    req, ctx = request._get_current_object(), g._get_current_object()
    app = current_app._get_current_object()
    # Routing failures (404/405) are answered before touching the store or keys.
    if req.routing_exception is not None:
        raise req.routing_exception
    # A public view needs nothing from the store: it is served even when the store is down.
    if getattr(app.view_functions.get(req.endpoint), "public", False):
        return
    connections.open_for_request(app, ctx)
    ctx.now = now = app.config["RUA_CLOCK"]()
    auth, header = app.extensions["rua.auth"], req.headers.get("Authorization")
    ctx.principal = principal = auth.authenticate(header, now, ctx.store_version)
    # Metering follows at once; the permission check (403) is the view's `requires`.
    heavy, counted = quota.route_kind(req.url_rule.rule)
    quota.gate(ctx, principal, now, heavy=heavy, counted=counted)
