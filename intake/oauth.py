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

import requests

from intake import provider_errors
from intake.mailbox_url import IntakeError
from intake.oauth_settings import MICROSOFT_AUTHORITY, GoogleAccount, MicrosoftApp, key_info

# A token is renewed this long before it expires, or after 3/4 of a lifetime shorter than 20 min.
RENEW_BEFORE = 300
# Both providers say how long a token lives; an answer that does not is taken as their usual hour.
USUAL_LIFETIME = 3600
HTTP_TIMEOUT = 30


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
        self.session.last_error = {}
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
                             f"{app.who}: {network_reason(exc)}") from None
        except ValueError as exc:
            # What msal raises when the tenant's discovery document is refused (no such
            # tenant): the provider's own answer, kept by the session, says more.
            self.client = None
            answer = self.session.last_error or {"error": "invalid_authority",
                                                 "error_description": str(exc)}
        if "access_token" not in answer:
            raise TokenError(provider_errors.microsoft(app, answer))
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
        try:
            credentials.refresh(Request(self.session))
        except exceptions.RefreshError as exc:
            raise TokenError(provider_errors.google(account, _google_answer(exc))) from None
        except exceptions.TransportError as exc:
            raise TokenError(f"cannot reach Google's token endpoint {account.token_url} for "
                             f"{account.who}: {network_reason(exc)}") from None
        if credentials.expiry is None:
            return credentials.token, USUAL_LIFETIME
        now = datetime.now(timezone.utc).replace(tzinfo=None)    # google-auth's naive UTC
        return credentials.token, (credentials.expiry - now).total_seconds()


def _google_answer(exc: Exception) -> dict:
    """The token endpoint's JSON answer google-auth puts beside its message, else the message."""
    if len(exc.args) > 1 and isinstance(exc.args[1], dict):
        return exc.args[1]
    message = exc.args[0] if exc.args else type(exc).__name__
    return {"error": " ".join(str(message).split())[:300]}


def network_reason(exc: BaseException) -> str:
    """The root of a requests/urllib3 failure in a few words (refused, timed out, not trusted)."""
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
    return reason or " ".join(str(exc).split())[:200]

class _RecordingSession(requests.Session):
    """Keeps the last error answer (msal's exceptions leave it out) and a default timeout."""

    def __init__(self):
        super().__init__()
        self.last_error: dict = {}

    def request(self, method, url, **kwargs):
        if kwargs.get("timeout") is None:      # msal passes None: no timeout at all
            kwargs["timeout"] = HTTP_TIMEOUT
        response = super().request(method, url, **kwargs)
        if response.status_code >= 400:
            self.last_error = _json_object(response.text)
        return response


def _json_object(text: str) -> dict:
    try:
        answer = json.loads(text)
    except ValueError:
        return {"error": " ".join(text.split())[:200]}
    return answer if isinstance(answer, dict) else {}
