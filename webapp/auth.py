"""Who is calling: a bearer key resolved to its organization, member role, scope and plan."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta

from flask import g

from store import keys
from store.models import ApiKey
from store.plans import PLANS
from store.versioned import VersionCache
from webapp.errors import ApiError

PERMISSIONS = ("report:read", "analytics:read", "domain:read", "alert:read", "integration:read")
ROLE_PERMISSIONS = {
    "owner": frozenset(PERMISSIONS),
    "admin": frozenset(PERMISSIONS),
    "analyst": frozenset(PERMISSIONS) - {"integration:read"},
    "viewer": frozenset({"analytics:read", "domain:read", "alert:read"}),
    "billing": frozenset({"integration:read"}),
}
# Every v1 permission is a read: both scopes allow all of them; the role narrows.
SCOPE_PERMISSIONS = {"read": frozenset(PERMISSIONS), "full": frozenset(PERMISSIONS)}
# The key's own row keeps the day of its last use, which outlives the request counters' 92
# days; the second comes from the counters (store.usage.per_key), written by every request
# anyway. A write to the store makes every worker forget the keys and snapshots it knows, so a
# key's row is written once a day, not every minute.
TOUCH_EVERY = timedelta(days=1)


@dataclass(frozen=True)
class Principal:
    org_id: str
    key_id: str
    member_id: str
    scope: str
    role: str
    plan: str

    def allows(self, permission: str) -> bool:
        return (permission in ROLE_PERMISSIONS.get(self.role, ())
                and permission in SCOPE_PERMISSIONS.get(self.scope, ()))


@dataclass
class _Entry:
    principal: Principal
    expires_at: datetime | None
    revoked: bool
    last_used_at: datetime | None


def unauthorized(code: str, token_sent: bool) -> ApiError:
    challenge = 'Bearer realm="rua"' + (', error="invalid_token"' if token_sent else "")
    return ApiError(401, code, headers={"WWW-Authenticate": challenge})


class Authenticator:
    """Resolves a bearer key with one joined query (store.keys.by_digest), remembered while the
    store is unchanged (store/versioned.py).

    On SQLite a key once looked up is reused until anyone writes to the store (a revocation
    does), so revocation still takes effect on the very next request; expiry is checked
    against the clock every time. On Postgres every request asks.
    """

    def __init__(self):
        self._keys = VersionCache()

    def authenticate(self, header: str | None, now: datetime, version=None) -> Principal:
        digest = _digest_of(header)
        return _admitted(self._keys.get(version, digest, lambda: _lookup(digest)), now)


def _digest_of(header: str | None) -> str:
    """The digest of the bearer key the header carries; 401 when there is none to look up."""
    scheme, _, token = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        raise unauthorized("missing_key", token_sent=False)
    token = token.strip()
    if not keys.well_formed(token):
        raise unauthorized("malformed_key", token_sent=True)
    return keys.digest(token)


def _admitted(entry: _Entry | None, now: datetime) -> Principal:
    """The key's principal, or the 401 that says why not; keeps last_used_at to the day."""
    if entry is None:
        raise unauthorized("invalid_key", token_sent=True)
    if entry.revoked:
        raise unauthorized("key_revoked", token_sent=True)
    if entry.expires_at is not None and entry.expires_at <= now:
        raise unauthorized("key_expired", token_sent=True)
    plan = PLANS.get(entry.principal.plan)
    if plan is not None and not plan.api:
        raise unauthorized("not_entitled", token_sent=True)
    if entry.last_used_at is None or now - entry.last_used_at >= TOUCH_EVERY:
        _touch(entry.principal.key_id, now)
    return entry.principal


def admit(row: tuple, now: datetime) -> Principal:
    """A key row (store.keys.by_digest's columns) judged as a bearer key is judged: the pages'
    sessions hold a key id, not the key."""
    return _admitted(_entry(row), now)


_AT = ApiKey.expires_at          # converts the driver's value (SQLite: text) to a datetime


def _lookup(digest: str) -> _Entry | None:
    row = keys.by_digest(digest)
    return _entry(row) if row else None


def _entry(row: tuple) -> _Entry:
    """A key row: id, org_id, member_id, scope, expires_at, revoked_at, last_used_at, role, plan."""
    key_id, org_id, member_id, scope, expires_at, revoked_at, last_used_at, role, plan = row
    return _Entry(Principal(org_id, key_id, member_id, scope, role, plan),
                  _AT.python_value(expires_at), revoked_at is not None,
                  _AT.python_value(last_used_at))


def _touch(key_id: str, now: datetime) -> None:
    # The condition keeps concurrent workers from rewriting the same day.
    (ApiKey.update(last_used_at=now)
     .where((ApiKey.id == key_id)
            & (ApiKey.last_used_at.is_null() | (ApiKey.last_used_at <= now - TOUCH_EVERY)))
     .execute())


def requires(permission: str):
    """View decorator: 403 insufficient_permission unless the key's scope and role allow it."""
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}")

    def decorate(view):
        @functools.wraps(view)
        def guarded(*args, **kwargs):
            if not g.principal.allows(permission):
                raise ApiError(403, "insufficient_permission", required=permission)
            return view(*args, **kwargs)
        guarded.permission = permission
        return guarded
    return decorate
