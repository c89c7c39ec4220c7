"""The pages' static files (one stylesheet, one icon), read once at start-up and served with
an ETag; not metered, no session needed."""
from __future__ import annotations

import hashlib
import pathlib

from flask import Response, abort, current_app, request

from webapp.request_checks import public
from webapp.pages.site import bp

FOLDER = pathlib.Path(__file__).with_name("static")
SERVED = {"site.css": "text/css; charset=utf-8", "icon.svg": "image/svg+xml"}


@bp.record_once
def _load_at_start_up(state):
    state.app.extensions["rua.pages.assets"] = {
        name: (FOLDER / name).read_bytes() for name in SERVED}


@bp.get("/assets/<name>")
@public
def asset(name: str):
    if name not in SERVED:
        abort(404)
    body = current_app.extensions["rua.pages.assets"][name]
    response = Response(body, content_type=SERVED[name])
    response.set_etag(hashlib.sha256(body).hexdigest()[:32])
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response.make_conditional(request)
