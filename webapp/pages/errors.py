"""Errors as pages: the API's answer to the same error (webapp/errors.py: its status, code,
Retry-After and logging), shown as a sentence a person can act on."""
from __future__ import annotations

from datetime import timedelta

from flask import current_app, g, make_response, request
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

from store.encoding import loads
from webapp import connections, errors
from webapp.pages.site import api_path, bp, render, secured

# What each error code the pages can meet means to a person; others show their status' name.
SENTENCES = {
    "route_not_found": "There is no page at this address.",
    "insufficient_permission": "Your key's role does not allow this page.",
    "report_not_found": "No report of your organization has this id.",
    "source_not_found": "No report of your organization names this sending address.",
    "domain_not_monitored": "Your organization does not monitor this domain.",
    "invalid_domain": "This is not a domain name.",
    "invalid_date": "A date must be a real day written YYYY-MM-DD.",
    "invalid_days": "The number of days is out of range.",
    "invalid_id": "This is not a report id.",
    "invalid_ip": "This is not an IP address.",
    "quota_exceeded": "Your organization has used its requests for this hour.",
    "rate_limited": "Too many requests in a few seconds.",
    "busy": "The figures are being computed; try again in a moment.",
    "storage_unavailable": "The store does not answer right now; try again in a moment.",
    "plan_unavailable": "Your organization's plan is not known to this server.",
    "internal_error": "Something went wrong on our side; it has been logged.",
}


def _answer(exc: Exception):
    """The API's answer to the error (an ApiError, storage failing, anything unexpected)."""
    if isinstance(exc, HTTPException):
        status = exc.code or 500
        code = "route_not_found" if status == 404 else HTTP_STATUS_CODES.get(status, "error")
        return errors.error_response(status, code.lower().replace(" ", "_"))
    if isinstance(exc, errors.UNAVAILABLE):
        connections.drop_failed(current_app)
    return errors.render(exc, request.environ)


@bp.errorhandler(Exception)
def page(exc: Exception):
    """The error page: its status and headers (Retry-After) are the API's."""
    answer = _answer(exc)
    body = loads(answer.get_data())
    retry = answer.headers.get("Retry-After")
    back_at = g.now + timedelta(seconds=int(retry)) if retry and g.get("now") else None
    html, status, headers = render(
        "pages/error.html", answer.status_code, title=body["error"], code=body["code"],
        sentence=SENTENCES.get(body["code"], body["error"] + "."), back_at=back_at,
        required=body.get("required"))
    for name in ("Retry-After", "X-Request-Id"):
        if name in answer.headers:
            headers[name] = answer.headers[name]
    return html, status, headers


def _first_segment(path: str) -> str:
    return path.split("/")[1]


@bp.app_errorhandler(404)
def not_found(exc: HTTPException):
    """A path no route has: for a browser (which prefers HTML) outside the API, the pages'
    "not found" page (a typo like /domainz); beside the API (/api/v2/… for /api/v1) or for a
    client preferring JSON, the API's 404."""
    preferred = request.accept_mimetypes.best_match(("application/json", "text/html"))
    if preferred != "text/html" or _first_segment(request.path) == _first_segment(api_path()):
        return errors.error_response(404, "route_not_found")
    return secured(make_response(page(exc)))     # outside the blueprint: its headers added here
