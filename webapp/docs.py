"""GET {base}/docs: the interactive API reference (Swagger UI) over openapi.json, no key needed.

Swagger UI's files come from the flask-swagger-ui package (nothing is fetched at run time); the
page and its start-up script are ours, so the Content-Security-Policy allows no inline script.
"""
from __future__ import annotations

import hashlib
import pathlib

import flask_swagger_ui
from flask import Blueprint, Response, abort, current_app, request

from webapp.request_checks import public

bp = Blueprint("docs", __name__)
PAGE = pathlib.Path(__file__).with_name("docs_page")
ASSETS = pathlib.Path(flask_swagger_ui.__file__).with_name("dist")
# The only files of the package the page uses, and their media types.
SERVED = {"swagger-ui.css": "text/css", "swagger-ui-bundle.js": "text/javascript",
          "favicon-32x32.png": "image/png"}
# Only this origin: scripts and styles from files, Swagger UI's data: icons, calls to the API.
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
          "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def _files() -> dict[str, tuple[bytes, str]]:
    files = {name: ((ASSETS / name).read_bytes(), kind) for name, kind in SERVED.items()}
    files["index.html"] = ((PAGE / "index.html").read_bytes(), "text/html; charset=utf-8")
    files["init.js"] = ((PAGE / "init.js").read_bytes(), "text/javascript")
    return files


@bp.record_once
def _load_at_start_up(state):
    state.app.extensions["rua.docs"] = _files()


def _send(name: str) -> Response:
    body, kind = current_app.extensions["rua.docs"][name]
    response = Response(body, content_type=kind)
    response.set_etag(hashlib.sha256(body).hexdigest()[:32])
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response.make_conditional(request)


@bp.get("/docs")
@public
def page():
    return _send("index.html")


@bp.get("/docs/init.js")
@public
def start_up():
    return _send("init.js")


@bp.get("/docs/assets/<name>")
@public
def asset(name: str):
    if name not in SERVED:
        abort(404)
    return _send(name)
