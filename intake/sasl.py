"""SASL XOAUTH2 and OAUTHBEARER (RFC 7628) for IMAP: which one to use and what to send."""
from __future__ import annotations

import json

XOAUTH2, OAUTHBEARER = "XOAUTH2", "OAUTHBEARER"
# XOAUTH2 first: Exchange Online offers nothing else and Gmail documents it; OAUTHBEARER is
# the standard one, used where a server offers only that.
PREFERRED = (XOAUTH2, OAUTHBEARER)


def choose(capabilities) -> str | None:
    """The mechanism to log in with among the server's AUTH= capabilities, None if neither."""
    offered = {_text(c).upper() for c in capabilities}
    for mechanism in PREFERRED:
        if f"AUTH={mechanism}" in offered:
            return mechanism
    return None


def initial_response(mechanism: str, user: str, token: str) -> bytes:
    """The client's first message: the user and the bearer token (Google's and RFC 7628's forms)."""
    if mechanism == XOAUTH2:
        return f"user={user}\x01auth=Bearer {token}\x01\x01".encode()
    authzid = user.replace("=", "=3D").replace(",", "=2C")
    return f"n,a={authzid},\x01auth=Bearer {token}\x01\x01".encode()


def server_error(challenge: bytes) -> str:
    """The server's error challenge in a few words: its JSON status (and scope), else its text."""
    try:
        answer = json.loads(challenge)
    except ValueError:
        # Bounded, with the token masked, by the login's refusal (intake/imap_login.py).
        return " ".join(challenge.decode("utf-8", "replace").split())
    if not isinstance(answer, dict):
        return str(answer)
    parts = [f"status {answer['status']}"] if "status" in answer else []
    if answer.get("scope"):
        parts.append(f"scope {answer['scope']}")
    return ", ".join(parts)


class Exchange:
    """The callable imapclient's sasl_login wants: the token first, then after an error challenge
    the empty answer each mechanism requires, keeping the challenge for the error message."""

    def __init__(self, mechanism: str, user: str, token: str):
        self.mechanism = mechanism
        self._first = initial_response(mechanism, user, token)
        self.sent = False
        self.error = ""

    def __call__(self, challenge: bytes) -> bytes:
        if not self.sent:
            self.sent = True
            return self._first
        self.error = server_error(challenge)
        # RFC 7628 3.2.3: OAUTHBEARER answers an error with a lone %x01; XOAUTH2 with nothing.
        if self.mechanism == OAUTHBEARER:
            return b"\x01"
        return b""


def _text(value) -> str:
    return value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
