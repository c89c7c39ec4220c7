"""The pages' sign-in sessions: a random token's digest and the key it was started with.

The cookie holds the token; the store holds only its SHA-256, so a backup or a reader of the
database cannot resume anyone's session. Each page view reads its session with its key in one
joined query (the columns of store.keys.by_digest), so the key is judged as the API judges it.
"""
from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import NamedTuple

from store.compiled import Compiled
from store.models import ApiKey, Member, Organization, PageSession

TOKEN_BYTES = 32


class Found(NamedTuple):
    """A session and its key's row (as store.keys.by_digest gives it)."""
    digest: str
    last_seen_at: datetime
    key_row: tuple


def new_token() -> str:
    """A fresh session token (256 random bits), only ever sent in the cookie."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


def start(key_id: str, token: str, now: datetime) -> None:
    PageSession.create(digest=digest(token), key=key_id, created_at=now, last_seen_at=now)


def _session_with_key(digest):
    return (PageSession
            .select(PageSession.last_seen_at, ApiKey.id, ApiKey.org, ApiKey.member, ApiKey.scope,
                    ApiKey.expires_at, ApiKey.revoked_at, ApiKey.last_used_at, Member.role,
                    Organization.plan)
            .join(ApiKey)
            .join(Member, on=(Member.id == ApiKey.member) & (Member.org == ApiKey.org))
            .switch(ApiKey).join(Organization)
            .where(PageSession.digest == digest))


# Every page view runs both: their SQL text is made once (store/compiled.py), not per view.
_FIND = Compiled(_session_with_key)
_TOUCH = Compiled(lambda digest, now, before: PageSession.update(last_seen_at=now).where(
    (PageSession.digest == digest) & (PageSession.last_seen_at <= before)))


def find(token: str) -> Found | None:
    """The session this token started, with its key; None when there is none."""
    session_digest = digest(token)
    rows = _FIND.run(digest=session_digest)
    if not rows:
        return None
    last_seen_at, *key_row = rows[0]
    return Found(session_digest, PageSession.last_seen_at.python_value(last_seen_at),
                 tuple(key_row))


def touch(session_digest: str, now: datetime, every: timedelta) -> None:
    """Keep the session's last view, at most once per `every`: each write to the store makes
    every worker forget the keys and snapshots it keeps (store/versioned.py)."""
    stored = PageSession.last_seen_at.db_value
    _TOUCH.execute(digest=session_digest, now=stored(now), before=stored(now - every))


def end(session_digest: str) -> None:
    PageSession.delete().where(PageSession.digest == session_digest).execute()


def end_idle(since: datetime) -> int:
    """Delete the sessions not seen since `since`; how many."""
    return PageSession.delete().where(PageSession.last_seen_at < since).execute()
