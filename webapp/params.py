"""The one place query strings become typed values, with the contract's fallbacks and 400s."""
from __future__ import annotations

import ipaddress
import re
from datetime import date
from typing import NamedTuple

from rules.authenticity import AUTHENTICITIES
from store import domain_names
from store.ids import normalize_ulid
from webapp.errors import ApiError

_INTEGER = re.compile(r"-?[0-9]{1,30}")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
MAX_OFFSET = 2**53 - 1          # beyond any table, and still exact in every JSON client
SEARCH_LENGTH = 100


class Page(NamedTuple):
    limit: int
    offset: int


def integer(text: str | None) -> int | None:
    """The integer written in text, or None when it is not a plain decimal integer."""
    if text is None or not _INTEGER.fullmatch(text):
        return None
    return int(text)


def page(args, default: int = 50, maximum: int = 200) -> Page:
    """limit: zero, negative or non-numeric → default, above maximum → maximum; offset ≥ 0."""
    limit = integer(args.get("limit"))
    limit = default if limit is None or limit <= 0 else min(limit, maximum)
    offset = integer(args.get("offset"))
    offset = 0 if offset is None or offset < 0 else min(offset, MAX_OFFSET)
    return Page(limit, offset)


def domain(value: str) -> str:
    """A domain name in its normal form (lower-case ASCII); 400 invalid_domain otherwise."""
    try:
        return domain_names.normalize(value)
    except domain_names.InvalidDomain:
        raise ApiError(400, "invalid_domain") from None


def optional_domain(args, name: str = "domain") -> str | None:
    value = args.get(name)
    return None if value is None else domain(value)


def day(args, name: str) -> date | None:
    """A YYYY-MM-DD calendar day, None when absent; 400 invalid_date when not a real day."""
    value = args.get(name)
    if value is None:
        return None
    if not _DAY.fullmatch(value):
        raise ApiError(400, "invalid_date")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ApiError(400, "invalid_date") from None


def days(args, default: int = 30, lo: int = 1, hi: int = 365, strict: bool = False) -> int:
    """A window length; outside lo..hi falls back to default, or is 400 invalid_days if strict."""
    value = args.get("days")
    if value is None:
        return default
    number = integer(value)
    if number is not None and lo <= number <= hi:
        return number
    if strict:
        raise ApiError(400, "invalid_days")
    return default


def choice(args, name: str, options, default: str) -> str:
    """One of options (matched case-insensitively); anything else falls back to default."""
    value = args.get(name)
    if value is None:
        return default
    value = value.lower()
    return value if value in options else default


def authenticity(args) -> str | None:
    """?authenticity=: one of the values rules/authenticity.py defines; anything else is no
    filter, as for the other choices."""
    return choice(args, "authenticity", AUTHENTICITIES, None)


def descending(args) -> bool:
    """sort_dir: desc (the default) or asc."""
    return choice(args, "sort_dir", ("asc", "desc"), "desc") == "desc"


def boolean(args, name: str) -> bool | None:
    """true/false (also 1/0, yes/no); absent or unrecognised is None, meaning "no filter"."""
    value = (args.get(name) or "").lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    return None


def search(args, name: str = "search") -> str | None:
    """A search term cut to 100 characters; empty means no search."""
    value = text(args, name)
    return value[:SEARCH_LENGTH] if value else None


def text(args, name: str) -> str | None:
    """A free-text filter as given; empty means no filter."""
    value = args.get(name)
    if not value:
        return None
    # No stored text holds NUL (Postgres refuses it even as a parameter): a term with one
    # matches nothing, and U+FFFD, which no report field is normalized to, says exactly that.
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def ulid(value: str) -> str:
    """A ULID in canonical upper case (lower case accepted); 400 invalid_id otherwise."""
    canonical = normalize_ulid(value)
    if canonical is None:
        raise ApiError(400, "invalid_id")
    return canonical


def ip(value: str) -> str:
    """An IPv4 or IPv6 address, returned as given; 400 invalid_ip otherwise."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ApiError(400, "invalid_ip") from None
    return value
