"""API keys: `rua_` plus 40 Crockford characters; only the SHA-256 digest is ever stored."""
import hashlib
import re
import secrets

from store.ids import encode

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
