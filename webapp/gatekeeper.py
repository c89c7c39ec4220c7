"""The one before-request step: route (404/405), storage, who is calling (401), then metering."""
from __future__ import annotations

from flask import current_app, g, request

from webapp import quota, storage


def public(view):
    """Mark a view that needs no key (the OpenAPI document, the API catalog)."""
    view.public = True
    return view


def gatekeep():
    # One hook, and each context object looked up once: every API request runs this.
    req, ctx, app = request._get_current_object(), g._get_current_object(), current_app._get_current_object()
    # Routing failures (404/405) are answered before touching storage or keys.
    if req.routing_exception is not None:
        raise req.routing_exception
    storage.open_for_request(app, ctx)
    if getattr(app.view_functions.get(req.endpoint), "public", False):
        return
    ctx.now = now = app.config["RUA_CLOCK"]()
    ctx.principal = principal = app.extensions["rua.auth"].authenticate(
        req.headers.get("Authorization"), now, ctx.store_version)
    # Metering follows at once; the permission check (403) is the view's `requires`.
    quota.gate(ctx, principal, now, req.url_rule.rule)
