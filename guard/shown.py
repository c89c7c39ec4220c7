"""URLs as rua prints them: a password masked whatever characters it holds (pure).

A password should be percent-encoded, but people paste them as they are: 'user:pa/ss@host' is
not a password to urlsplit (the '/' starts a path). So the password here runs from the first
':' after the user name to the first '@' that is followed by something shaped like a host, and
is masked whole; with `query`, every query value is masked too (webhook URLs carry tokens).
"""
from __future__ import annotations

import re

MASK = "***"
_CREDENTIALS = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*):(?P<password>.*?)"
    r"@(?=(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::\d*)?(?:[/?#]|$))", re.DOTALL)
_QUERY_VALUE = re.compile(r"(?P<name>[?&;][^=&;#]*=)[^&;#]*")


def masked(url: str, *, query: bool = False) -> str:
    """`url` with its password (and, with `query`, every query value) replaced by ***."""
    shown = _CREDENTIALS.sub(lambda m: f"{m['head']}:{MASK}@", url, count=1)
    if query:
        shown = _QUERY_VALUE.sub(lambda m: m["name"] + MASK, shown)
    return shown
