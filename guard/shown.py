"""URLs as rua prints them: a password masked whatever characters it holds (pure).

A password should be percent-encoded, but people paste them as they are: 'user:pa/ss@host' is
not a password to urlsplit (the '/' starts a path). So here the password runs from the first
':' after the user name to the last '@' that is followed by something shaped like a host and
is not inside a query's name=value (`?from=rua@example.net`), and it is masked whole. With
`query`, every query value is masked too (webhook URLs carry tokens).
"""
from __future__ import annotations

import re

MASK = "***"
_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*:")
_AT_HOST = re.compile(r"@(?=(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::\d*)?(?:[/?#]|$))")
_QUERY_VALUE = re.compile(r"(?P<name>[?&;][^=&;#]*=)[^&;#]*")


def masked(url: str, *, query: bool = False) -> str:
    """`url` with its password (and, with `query`, every query value) replaced by ***."""
    shown = url
    user = _USER.match(url)
    if user:
        end = _password_end(url, user.end())
        if end is not None:
            shown = url[:user.end()] + MASK + url[end:]
    if query:
        shown = _QUERY_VALUE.sub(lambda m: m["name"] + MASK, shown)
    return shown


def _password_end(url: str, start: int) -> int | None:
    """Where the password that starts at `start` ends (at an '@'), or None: no password."""
    ats = [at.start() for at in _AT_HOST.finditer(url, start)]
    outside_query = [at for at in ats if "=" not in re.split(r"[?&]", url[start:at])[-1]]
    if outside_query:
        return outside_query[-1]
    if ats:
        return ats[0]
    return None
