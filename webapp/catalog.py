"""GET /.well-known/api-catalog: the RFC 9727 linkset that lets tools discover the API, no key.

It names the API, its OpenAPI description and its docs page only: every other path off the
contract is a 404.
"""
from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from flask import Blueprint, Response, current_app

from store.encoding import dumps
from webapp.request_checks import public

bp = Blueprint("catalog", __name__)   # served at the site root (webapp/__init__.py)
PATH = "/.well-known/api-catalog"
PROFILE = "https://www.rfc-editor.org/info/rfc9727"
MEDIA_TYPE = f'application/linkset+json; profile="{PROFILE}"'


def site_url(base_url: str, path: str) -> str:
    """An absolute URL on the same origin as base_url."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def linkset(base_url: str) -> dict:
    """The catalog: the one API (v1), where its description lives and its docs page."""
    base = base_url.rstrip("/")
    api = {
        "anchor": base,
        "service-desc": [{"href": f"{base}/openapi.json",
                          "type": "application/vnd.oai.openapi+json;version=3.1"}],
        # RFC 8631: the human-readable reference rendered from that description.
        "service-doc": [{"href": f"{base}/docs", "type": "text/html"}],
    }
    catalog = {"anchor": site_url(base_url, PATH), "item": [{"href": base}]}
    return {"linkset": [catalog, api]}


@bp.record_once
def _build_at_start_up(state):
    state.app.extensions["rua.catalog"] = dumps(linkset(state.app.config["RUA"].base_url))


@bp.get(PATH)
@public
def index():
    response = Response(current_app.extensions["rua.catalog"], content_type=MEDIA_TYPE)
    # RFC 9727 section 2: the resource names itself with the api-catalog relation.
    response.headers["Link"] = f'<{PATH}>; rel="api-catalog"'
    return response

