"""GET /.well-known/api-catalog: the RFC 9727 linkset that lets tools discover the API, no key.

Also GET /docs, the README as Markdown: the human documentation the catalog's `service-doc`
link names (the catalog needs somewhere to point, and the README is that documentation).
"""
from __future__ import annotations

import pathlib
from urllib.parse import urlsplit, urlunsplit

from flask import Blueprint, Response, abort, current_app

from store.encoding import dumps
from webapp.gatekeeper import public

bp = Blueprint("catalog", __name__)
ROOT = True
PATH = "/.well-known/api-catalog"
DOCS_PATH = "/docs"
PROFILE = "https://www.rfc-editor.org/info/rfc9727"
MEDIA_TYPE = f'application/linkset+json; profile="{PROFILE}"'
README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def site_url(base_url: str, path: str) -> str:
    """An absolute URL on the same origin as base_url."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def linkset(base_url: str, has_docs: bool) -> dict:
    """The catalog: the one API (v1) and where its description and documentation live."""
    base = base_url.rstrip("/")
    api = {
        "anchor": base,
        "service-desc": [{"href": f"{base}/openapi.json",
                          "type": "application/vnd.oai.openapi+json;version=3.1"}],
    }
    if has_docs:
        api["service-doc"] = [{"href": site_url(base_url, DOCS_PATH), "type": "text/markdown"}]
    catalog = {"anchor": site_url(base_url, PATH), "item": [{"href": base}]}
    return {"linkset": [catalog, api]}


@bp.record_once
def _build_at_start_up(state):
    readme = README.read_bytes() if README.is_file() else None
    body = dumps(linkset(state.app.config["RUA"].base_url, readme is not None))
    state.app.extensions["rua.catalog"] = (body, readme)


@bp.get(PATH)
@public
def index():
    body, _ = current_app.extensions["rua.catalog"]
    response = Response(body, content_type=MEDIA_TYPE)
    # RFC 9727 section 2: the resource names itself with the api-catalog relation.
    response.headers["Link"] = f'<{PATH}>; rel="api-catalog"'
    return response


@bp.get(DOCS_PATH)
@public
def docs():
    _, readme = current_app.extensions["rua.catalog"]
    if readme is None:
        abort(404)
    return Response(readme, content_type="text/markdown; charset=utf-8")
