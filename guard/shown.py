"""URLs and other parties' text as rua prints them (pure).

A URL's password is masked whatever characters it holds.
A password should be percent-encoded, but people paste them as they are: 'user:pa/ss@host' is
not a password to urlsplit (the '/' starts a path). So here the password runs from the first
':' after the user name to the last '@' that is followed by something shaped like a host and
is not inside a query's name=value (`?from=rua@example.net`), and it is masked whole. With
`query`, every query value is masked too (webhook URLs carry tokens).

What a server or token endpoint says back is bounded and has every secret rua sent it masked
(`scrubbed`): a server may echo the request, a Basic auth header or a SASL string included.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Iterable
from urllib.parse import quote, quote_plus

MASK = "***"
_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*:")
_AT_HOST = re.compile(r"@(?=(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::\d*)?(?:[/?#]|$))")
_QUERY_VALUE = re.compile(r"(?P<name>[?&;][^=&;#]*=)[^&;#]*")
# How much of a server's or provider's words is shown: enough for its reason, not its echo.
SHOWN_CHARS = 300
# A run of base64 (standard or URL-safe) long enough to hide a secret.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{4,}=*")


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


def scrubbed(text: str, secrets: Iterable[str], limit: int = SHOWN_CHARS) -> str:
    """Another party's `text` on one line of at most `limit` characters, every secret rua sent
    it masked: as sent, %-encoded, JSON- or bytes-escaped, and inside any base64 it hides in."""
    secrets = [secret for secret in secrets if secret]
    for form in sorted({form for secret in secrets for form in _forms(secret)}, key=len,
                       reverse=True):
        text = text.replace(form, MASK)
    line = " ".join(text.split())
    if secrets:
        line = _BASE64_RUN.sub(lambda run: _masked_run(run[0], secrets), line)
    if len(line) > limit:
        line = line[:limit - 1] + "…"
    return line


def _forms(secret: str) -> set[str]:
    """The ways a secret can come back: as sent, in a form body or URL, in JSON or a bytes repr."""
    return {secret, quote(secret, safe=""), quote(secret), quote_plus(secret),
            json.dumps(secret)[1:-1], repr(secret.encode())[2:-1]}


def _masked_run(run: str, secrets: list[str]) -> str:
    """MASK when the base64 run decodes (from any of its first four characters) to bytes that
    hold a secret or its %-encoded form (a Basic auth header, a SASL string), else the run."""
    wanted = [form.encode() for secret in secrets
              for form in (secret, quote(secret, safe=""), quote_plus(secret))]
    alphabet = run.rstrip("=").replace("-", "+").replace("_", "/")
    for start in range(min(4, len(alphabet))):
        chunk = alphabet[start:]
        if len(chunk) % 4 == 1:
            chunk = chunk[:-1]      # a lone last character carries no whole byte
        try:
            decoded = base64.b64decode(chunk + "=" * (-len(chunk) % 4))
        except (binascii.Error, ValueError):
            continue
        if any(form in decoded for form in wanted):
            return MASK
    return run
