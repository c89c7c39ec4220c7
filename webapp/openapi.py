"""GET {base}/openapi.json: the hand-kept OpenAPI 3.1 description of v1, no key needed."""
from __future__ import annotations

import hashlib
import json
import pathlib

from flask import Blueprint, Response, current_app, request

from store.encoding import dumps
from webapp.request_checks import public

bp = Blueprint("openapi", __name__)
DOCUMENT = pathlib.Path(__file__).with_name("openapi.json")
MEDIA_TYPE = "application/json"


def load(base_url: str) -> bytes:
    """The document as served: its one server entry names this deployment's base URL."""
    doc = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    doc["servers"] = [{"url": base_url, "description": "This deployment (RUA_BASE_URL)."}]
    return dumps(doc)


@bp.record_once
def _load_at_start_up(state):
    # Read and printed once per process; every request is answered from these bytes.
    body = load(state.app.config["RUA"].base_url)
    state.app.extensions["rua.openapi"] = (body, hashlib.sha256(body).hexdigest()[:32])


@bp.get("/openapi.json")
@public
def document():
    body, etag = current_app.extensions["rua.openapi"]
    response = Response(body, mimetype=MEDIA_TYPE)
    response.set_etag(etag)
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response.make_conditional(request)
