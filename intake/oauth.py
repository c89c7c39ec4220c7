"""OAuth 2.0 access tokens for the IMAP login, obtained and renewed by rua itself.

Microsoft 365: an app registration's client-credentials grant, with msal (a secret or a
certificate). Google Workspace: a service account's JWT-bearer grant acting for the mailbox user
(domain-wide delegation), with google-auth. A token is kept in memory and renewed before it
expires; every refusal becomes one line naming the app, the mailbox and what to fix.
"""
from __future__ import annotations

import functools
import json
import ssl
import time
from datetime import datetime, timezone
from typing import Callable
from urllib.parse import parse_qsl

import requests

from guard.shown import scrubbed
from intake import provider_errors
from intake.mailbox_url import IntakeError
from intake.oauth_settings import MICROSOFT_AUTHORITY, GoogleAccount, MicrosoftApp, key_info

# A token is renewed this long before it expires, or after 3/4 of a lifetime shorter than 20 min.
RENEW_BEFORE = 300
# Both providers say how long a token lives; an answer that does not is taken as their usual hour.
USUAL_LIFETIME = 3600
HTTP_TIMEOUT = 30
# The form fields of a token request that carry a credential (RFC 6749, RFC 7521, RFC 7523).
SECRET_FIELDS = ("client_secret", "client_assertion", "assertion", "refresh_token", "password")


class TokenError(IntakeError):
    """No token: the provider refused one or could not be reached. The message is one line."""

def renewal_delay(lifetime: float) -> float:
    """Seconds after it was issued that a token of this lifetime is renewed."""
    return lifetime - min(RENEW_BEFORE, lifetime / 4)


class Tokens:
    """One account's current token: fetched when first wanted, renewed once it is due."""

    def __init__(self, fetch: Callable[[], tuple[str, float]], clock=time.monotonic):
        self._fetch = fetch
        self._clock = clock
        self._value = ""
        self._renew_at = 0.0

    def current(self) -> str:
        """The token, renewed first when it is due (a TokenError when that fails)."""
        now = self._clock()
        if not self._value or now >= self._renew_at:
            value, lifetime = self._fetch()
            self._value, self._renew_at = value, now + renewal_delay(lifetime)
        return self._value

    def renew_in(self) -> float:
        """Seconds until the current token is due for renewal (0 when there is none)."""
        if not self._value:
            return 0.0
        return max(0.0, self._renew_at - self._clock())


@functools.lru_cache(maxsize=8)
def tokens_for(account: MicrosoftApp | GoogleAccount) -> Tokens:
    """The one Tokens of these settings in this process, so a token outlives a connection."""
    if isinstance(account, MicrosoftApp):
        return Tokens(MicrosoftSource(account).fetch)
    return Tokens(GoogleSource(account).fetch)


class MicrosoftSource:
    """Client-credentials tokens from Entra ID through msal, which keeps its own cache."""

    def __init__(self, app: MicrosoftApp):
        self.app = app
        self.session = _RecordingSession()
        self.client = None

    def fetch(self) -> tuple[str, float]:
        import msal
        app = self.app
        self.session.forget()
        try:
            if self.client is None:
                self.client = msal.ConfidentialClientApplication(
                    app.client_id, client_credential=self._credential(),
                    authority=f"{app.authority}/{app.tenant}", http_client=self.session,
                    # msal knows Microsoft's clouds; another authority is trusted as given.
                    instance_discovery=app.authority == MICROSOFT_AUTHORITY)
            answer = self.client.acquire_token_for_client(scopes=[app.scope])
        except requests.RequestException as exc:
            raise TokenError(f"cannot reach Microsoft's token endpoint at {app.authority} for "
                             f"{app.who}: {network_reason(exc, self.session.sent)}") from None
        except ValueError as exc:
            # What msal raises when the tenant's discovery document is refused (no such
            # tenant): the provider's own answer, kept by the session, says more.
            self.client = None
            answer = self.session.last_error or {"error": "invalid_authority",
                                                 "error_description": str(exc)}
        if "access_token" not in answer:
            hidden = self.session.sent | {app.secret}
            raise TokenError(provider_errors.microsoft(app, answer, hidden))
        return answer["access_token"], float(answer.get("expires_in") or USUAL_LIFETIME)

    def _credential(self):
        if self.app.private_key:
            return {"private_key": self.app.private_key, "thumbprint": self.app.thumbprint}
        return self.app.secret


class GoogleSource:
    """JWT-bearer tokens (RFC 7523) for a service account acting for the mailbox user."""

    def __init__(self, account: GoogleAccount):
        self.account = account
        self.session = _RecordingSession()

    def fetch(self) -> tuple[str, float]:
        from google.auth import exceptions
        from google.auth.transport.requests import Request
        from google.oauth2 import service_account
        account = self.account
        credentials = service_account.Credentials.from_service_account_info(
            key_info(account), scopes=[account.scope], subject=account.user)
        self.session.forget()
        try:
            credentials.refresh(Request(self.session))
        except exceptions.RefreshError as exc:
            answer = _google_answer(exc)
            raise TokenError(provider_errors.google(account, answer, self.session.sent)) from None
        except exceptions.TransportError as exc:
            raise TokenError(f"cannot reach Google's token endpoint {account.token_url} for "
                             f"{account.who}: {network_reason(exc, self.session.sent)}") from None
        if credentials.expiry is None:
            return credentials.token, USUAL_LIFETIME
        now = datetime.now(timezone.utc).replace(tzinfo=None)    # google-auth's naive UTC
        return credentials.token, (credentials.expiry - now).total_seconds()


def _google_answer(exc: Exception) -> dict:
    """The token endpoint's JSON answer google-auth puts beside its message, else the message."""
    if len(exc.args) > 1 and isinstance(exc.args[1], dict):
        return exc.args[1]
    message = exc.args[0] if exc.args else type(exc).__name__
    return {"error": str(message)}


def network_reason(exc: BaseException, hidden=()) -> str:
    """The root of a requests/urllib3 failure in a few words (refused, timed out, not trusted);
    what it quotes has the `hidden` secrets masked."""
    seen, current = set(), exc
    reason = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return (f"certificate not trusted ({current.verify_message}); REQUESTS_CA_BUNDLE "
                    f"names a private CA")
        if isinstance(current, OSError) and current.strerror:
            reason = current.strerror
        inner = getattr(current, "reason", None)
        if not isinstance(inner, BaseException):
            inner = next((a for a in current.args if isinstance(a, BaseException)), None)
        current = inner or current.__cause__ or current.__context__
    return scrubbed(reason or str(exc), hidden, 200)


class _RecordingSession(requests.Session):
    """Keeps the last error answer (msal's exceptions leave it out), every credential sent (to
    mask it should the endpoint echo it back) and a default timeout."""

    def __init__(self):
        super().__init__()
        self.last_error: dict = {}
        self.sent: set[str] = set()

    def forget(self) -> None:
        """A new token request begins: what the last one sent and was answered goes."""
        self.last_error = {}
        self.sent = set()

    def request(self, method, url, **kwargs):
        if kwargs.get("timeout") is None:      # msal passes None: no timeout at all
            kwargs["timeout"] = HTTP_TIMEOUT
        self.sent |= sent_credentials(kwargs.get("data"), kwargs.get("headers"))
        response = super().request(method, url, **kwargs)
        if response.status_code >= 400:
            self.last_error = _json_object(response.text)
        return response


def sent_credentials(data, headers) -> set[str]:
    """The credentials in a token request: its secret form fields (msal sends a dict,
    google-auth an encoded body) and the Authorization header's."""
    if isinstance(data, (bytes, str)):
        data = dict(parse_qsl(_text(data)))
    found = {_text(value) for name, value in (data or {}).items() if name in SECRET_FIELDS}
    authorization = (headers or {}).get("Authorization", "")
    found.add(authorization.partition(" ")[2])
    return found - {""}


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _json_object(text: str) -> dict:
    try:
        answer = json.loads(text)
    except ValueError:
        return {"error": text}
    return answer if isinstance(answer, dict) else {}
