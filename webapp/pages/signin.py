"""GET and POST /sign-in (one field, `key`, checked exactly as the API checks a bearer key) and
POST /sign-out."""
from __future__ import annotations

from flask import current_app, g, redirect, request, url_for

from webapp.errors import ApiError
from webapp.pages import sessions
from webapp.pages.params import local_path
from webapp.pages.site import bp, form, render

# Why the sign-in form is shown again: the API's 401 codes, and the pages' own.
REASONS = {
    "missing_key": "Paste an API key.",
    "malformed_key": "That is not an API key: a key is rua_ followed by 40 characters.",
    "invalid_key": "No key matches what was pasted.",
    "key_revoked": "This key was revoked: ask your organization for another.",
    "key_expired": "This key has expired: ask your organization for another.",
    "not_entitled": "Your organization's plan does not include the API.",
    "session_idle": "You were signed out after a while without a page view.",
    "form_expired": "The form had expired: please try again.",
}


def _form(status: int = 200, reason: str | None = None):
    return render("pages/sign_in.html", status, reason=REASONS.get(reason or ""),
                  next=local_path(request.values.get("next")))


@bp.get("/sign-in")
@form
def sign_in():
    return _form(reason=request.args.get("ended"))


@bp.post("/sign-in")
@form
def signing_in():
    if not sessions.form_is_ours():
        return _form(400, "form_expired")
    key = request.form.get("key", "").strip()
    try:
        principal = current_app.extensions["rua.auth"].authenticate(
            f"Bearer {key}", g.now, g.get("store_version"))
    except ApiError as refused:
        return _form(refused.status, refused.code)
    response = redirect(local_path(request.form.get("next")), 303)
    sessions.begin(response, principal, g.now, current_app.config["RUA"])
    return response


@bp.post("/sign-out")
@form
def sign_out():
    if not sessions.form_is_ours():
        return _form(400, "form_expired")
    response = redirect(url_for("pages.sign_in"), 303)
    sessions.finish(response)
    return response
