"""Sign-in sessions of the pages: a random token in an HttpOnly cookie, its digest in the store
(store/page_sessions.py), and the form token every form carries against cross-site posts."""
from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from flask import g, request

from store import page_sessions
from webapp import auth
from webapp.errors import ApiError

COOKIE = "rua_session"
FORM_COOKIE = "rua_form"
FORM_FIELD = "form_token"
# The session's last view is written at most this often (each write makes every worker forget
# what it keeps of the store), so a session may outlive its idle time by up to this much.
TOUCH_EVERY = timedelta(minutes=1)


def idle_limit(config) -> timedelta:
    return timedelta(minutes=config.session_idle_minutes)


def resume(now: datetime, config) -> auth.Principal | None:
    """The principal of the request's session; None (and g.ended says why, when there was a
    session) when there is none, it idled out, or its key no longer opens the API."""
    token = request.cookies.get(COOKIE)
    found = page_sessions.find(token) if token else None
    if found is None:
        return None
    if now - found.last_seen_at > idle_limit(config) + TOUCH_EVERY:
        _ended(found, "session_idle")
        return None
    try:
        principal = auth.admit(found.key_row, now)
    except ApiError as refused:          # revoked, expired, or the plan lost the API
        _ended(found, refused.code)
        return None
    page_sessions.touch(found.digest, now, TOUCH_EVERY)
    g.session_digest = found.digest
    return principal


def _ended(found: page_sessions.Found, reason: str) -> None:
    page_sessions.end(found.digest)
    g.ended = reason


def begin(response, principal: auth.Principal, now: datetime, config) -> None:
    """Start a session for the principal's key and hand its token to the browser."""
    page_sessions.end_idle(now - idle_limit(config) - TOUCH_EVERY)     # the store's tidying
    earlier = request.cookies.get(COOKIE)
    if earlier:                      # signing in again replaces the browser's session
        page_sessions.end(page_sessions.digest(earlier))
    token = page_sessions.new_token()
    page_sessions.start(principal.key_id, token, now)
    # Lax: a link from an alert e-mail arrives signed in; a cross-site POST does not.
    response.set_cookie(COOKIE, token, httponly=True, samesite="Lax", secure=request.is_secure,
                        path="/")


def finish(response) -> None:
    """Sign out: the session's row goes, and the browser forgets its token."""
    token = request.cookies.get(COOKIE)
    if token:
        page_sessions.end(page_sessions.digest(token))
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="Lax",
                           secure=request.is_secure)


def form_token() -> str:
    """The token the page's forms carry: the browser's form cookie (a new one when it has none,
    set on the answer by keep_form_token)."""
    token = request.cookies.get(FORM_COOKIE) or g.get("new_form_token")
    if not token:
        token = g.new_form_token = secrets.token_urlsafe(24)
    return token


def keep_form_token(response) -> None:
    """A form token made for this page goes to the browser in a cookie of this site only."""
    token = g.get("new_form_token")
    if token:
        response.set_cookie(FORM_COOKIE, token, httponly=True, samesite="Strict",
                            secure=request.is_secure, path="/")


def form_is_ours() -> bool:
    """The posted form carries the token of this browser's form cookie (double submit): another
    site can make a browser post, but can neither read nor set this cookie."""
    cookie = request.cookies.get(FORM_COOKIE, "")
    sent = request.form.get(FORM_FIELD, "")
    return bool(cookie) and secrets.compare_digest(cookie.encode(), sent.encode())
