"""API keys: `rua_` plus 40 Crockford characters; only the SHA-256 digest is ever stored."""
import hashlib
import re
import secrets

from store import db
from store.ids import encode
from store.compiled import Prepared

KEY_PREFIX = "rua_"
KEY_BODY = 40
PREFIX_LENGTH = 12
KEY_PATTERN = re.compile(r"rua_[0-9A-HJKMNP-TV-Z]{40}")


def new_key() -> str:
    """A fresh key with 200 random bits; shown once, never stored."""
    return KEY_PREFIX + encode(secrets.randbits(5 * KEY_BODY), KEY_BODY)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("ascii", "replace")).hexdigest()


def display_prefix(key: str) -> str:
    """The leading characters that let a person recognise a key without revealing it."""
    return key[:PREFIX_LENGTH]


def well_formed(token: str) -> bool:
    return bool(KEY_PATTERN.fullmatch(token))


# The one look-up of a key, on both databases: the key, its member's role (a member of another
# organization can never lend a key to this one: no role, no key) and its organization's plan.
# The two are read by subqueries, each an index probe or a scan of a small table: as a join,
# Postgres merged the key with every organization in id order.
_BY_DIGEST = Prepared("rua_key_by_digest", """
SELECT k.id, k.org_id, k.member_id, k.scope, k.expires_at, k.revoked_at, k.last_used_at,
       (SELECT m.role FROM member m WHERE m.id = k.member_id AND m.org_id = k.org_id),
       (SELECT o.plan FROM organization o WHERE o.id = k.org_id)
FROM api_key k
WHERE k.digest = :digest""", {"digest": "text"})


def by_digest(key_digest: str) -> tuple | None:
    """(id, org_id, member_id, scope, expires_at, revoked_at, last_used_at, role, plan) of the
    key with this digest, as the driver gives them; None when there is none."""
    row = _BY_DIGEST.run(db, {"digest": key_digest}).fetchone()
    return row if row is not None and row[7] is not None else None
