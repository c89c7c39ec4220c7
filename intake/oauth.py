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
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

import requests

from intake import provider_errors
from intake.mailbox_url import IntakeError, read_secret

MICROSOFT, GOOGLE = "microsoft", "google"
MICROSOFT_AUTHORITY = "https://login.microsoftonline.com"
MICROSOFT_SCOPE = "https://outlook.office365.com/.default"
GOOGLE_SCOPE = "https://mail.google.com/"
# A token is renewed this long before it expires, or after 3/4 of a lifetime shorter than 20 min.
RENEW_BEFORE = 300
# Both providers say how long a token lives; an answer that does not is taken as their usual hour.
USUAL_LIFETIME = 3600
HTTP_TIMEOUT = 30


class TokenError(IntakeError):
    """No token: the provider refused one or could not be reached. The message is one line."""


@dataclass(frozen=True)
class MicrosoftApp:
    """An Entra app registration allowed to open `user`'s mailbox (a secret or a certificate)."""
    tenant: str
    client_id: str
    user: str
    authority: str
    scope: str
    secret: str = field(default="", repr=False)
    private_key: str = field(default="", repr=False)
    thumbprint: str = ""

    @property
    def who(self) -> str:
        return f"app {self.client_id} in tenant {self.tenant} for mailbox {self.user}"


@dataclass(frozen=True)
class GoogleAccount:
    """A service account acting for `user` through domain-wide delegation."""
    email: str
    client_id: str
    user: str
    token_url: str
    scope: str
    private_key_id: str = ""
    private_key: str = field(default="", repr=False)

    @property
    def who(self) -> str:
        return f"service account {self.email} (client {self.client_id}) for mailbox {self.user}"


def settings(config, user: str) -> MicrosoftApp | GoogleAccount:
    """The provider's settings for RUA_IMAP_AUTH, secrets read from their files; no network."""
    if config.imap_auth == MICROSOFT:
        return _microsoft_app(config, user)
    if config.imap_auth == GOOGLE:
        return _google_account(config, user)
    raise IntakeError(f"RUA_IMAP_AUTH must be password, microsoft or google, "
                      f"not {config.imap_auth!r}")


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
            _key_info(account), scopes=[account.scope], subject=account.user)
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


def _microsoft_app(config, user: str) -> MicrosoftApp:
    missing = [name for name, value in (("RUA_IMAP_OAUTH_TENANT", config.imap_oauth_tenant),
                                        ("RUA_IMAP_OAUTH_CLIENT_ID", config.imap_oauth_client_id))
               if not value]
    if missing:
        raise IntakeError(f"RUA_IMAP_AUTH=microsoft needs {' and '.join(missing)} "
                          f"(the app registration's Directory and Application IDs)")
    common = dict(tenant=config.imap_oauth_tenant, client_id=config.imap_oauth_client_id,
                  user=user, authority=(config.imap_oauth_authority or MICROSOFT_AUTHORITY)
                  .rstrip("/"), scope=config.imap_oauth_scope or MICROSOFT_SCOPE)
    if config.imap_oauth_cert_file:
        key, thumbprint = _certificate(config.imap_oauth_cert_file)
        return MicrosoftApp(**common, private_key=key, thumbprint=thumbprint)
    if config.imap_oauth_secret_file:
        secret = read_secret("RUA_IMAP_OAUTH_SECRET_FILE", config.imap_oauth_secret_file)
    else:
        secret = config.imap_oauth_client_secret
    if not secret:
        raise IntakeError("RUA_IMAP_AUTH=microsoft needs a client secret "
                          "(RUA_IMAP_OAUTH_SECRET_FILE or RUA_IMAP_OAUTH_CLIENT_SECRET) or a "
                          "certificate (RUA_IMAP_OAUTH_CERT_FILE)")
    return MicrosoftApp(**common, secret=secret)


def _certificate(path: str) -> tuple[str, str]:
    """The PEM private key and the SHA-1 thumbprint of the certificate in the same file."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    pem = read_secret("RUA_IMAP_OAUTH_CERT_FILE", path)
    data = pem.encode()
    try:
        certificate = x509.load_pem_x509_certificate(data)
    except ValueError:
        raise IntakeError(f"RUA_IMAP_OAUTH_CERT_FILE {path} holds no PEM certificate: put the "
                          f"certificate uploaded to the app and its private key in it") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise IntakeError(f"RUA_IMAP_OAUTH_CERT_FILE {path}: the private key is encrypted; "
                          f"store it unencrypted in a file only rua can read") from None
    except ValueError:
        raise IntakeError(f"RUA_IMAP_OAUTH_CERT_FILE {path} holds no readable PEM private key "
                          f"beside its certificate") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise IntakeError(f"RUA_IMAP_OAUTH_CERT_FILE {path}: the key must be RSA (Entra ID "
                          f"checks an RS256 signature), not {type(key).__name__}")
    return pem, certificate.fingerprint(hashes.SHA1()).hex()


def _google_account(config, user: str) -> GoogleAccount:
    path = config.imap_oauth_service_account_file
    if not path:
        raise IntakeError("RUA_IMAP_AUTH=google needs RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE "
                          "(the service account's JSON key)")
    try:
        key = json.loads(read_secret("RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE", path))
    except ValueError:
        key = None
    fields_needed = ("client_email", "client_id", "private_key", "token_uri")
    if not _is_service_account_key(key, fields_needed):
        raise IntakeError(f"RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE {path} is not a service "
                          f"account's JSON key (type service_account, with "
                          f"{', '.join(fields_needed)})")
    account = GoogleAccount(email=key["client_email"], client_id=key["client_id"], user=user,
                            token_url=config.imap_oauth_token_url or key["token_uri"],
                            scope=config.imap_oauth_scope or GOOGLE_SCOPE,
                            private_key_id=str(key.get("private_key_id") or ""),
                            private_key=key["private_key"])
    from google.oauth2 import service_account
    try:
        service_account.Credentials.from_service_account_info(_key_info(account))
    except ValueError:
        raise IntakeError(f"RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE {path}: its private_key is "
                          f"not a readable PEM key") from None
    return account


def _is_service_account_key(key, fields_needed: tuple[str, ...]) -> bool:
    if not isinstance(key, dict) or key.get("type") != "service_account":
        return False
    return all(isinstance(key.get(name), str) for name in fields_needed)


def _key_info(account: GoogleAccount) -> dict:
    return {"type": "service_account", "client_email": account.email,
            "client_id": account.client_id, "private_key_id": account.private_key_id,
            "private_key": account.private_key, "token_uri": account.token_url}


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
