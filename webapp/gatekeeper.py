"""The before-request step for documented API paths: who is calling (401), then metering."""
from __future__ import annotations

from flask import current_app, g, request

from webapp import quota


def public(view):
    """Mark a view that needs no key (the OpenAPI document, the API catalog)."""
    view.public = True
    return view


def gatekeep():
    view = current_app.view_functions.get(request.endpoint)
    if getattr(view, "public", False):
        return
    app = current_app
    g.now = app.config["RUA_CLOCK"]()
    g.principal = app.extensions["rua.auth"].authenticate(
        request.headers.get("Authorization"), g.now, g.get("store_version"))
    # Metering follows at once; the permission check (403) is the view's `requires`.
    quota.gate()
