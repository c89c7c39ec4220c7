"""RUA_IMAP_AUTH and RUA_IMAP_OAUTH_*: the Microsoft app or Google service account rua logs in
as, with its secret read from its file. Nothing here touches the network."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from intake.mailbox_url import IntakeError, read_secret

MICROSOFT, GOOGLE = "microsoft", "google"
MICROSOFT_AUTHORITY = "https://login.microsoftonline.com"
MICROSOFT_SCOPE = "https://outlook.office365.com/.default"
GOOGLE_SCOPE = "https://mail.google.com/"


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
    # When the certificate stops being accepted (its notAfter, naive UTC); None for a secret,
    # whose end Entra ID shows only on the app's page.
    expires: datetime | None = None

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


def _microsoft_app(config, user: str) -> MicrosoftApp:
    missing = [name for name, value in (("RUA_IMAP_OAUTH_TENANT", config.imap_oauth_tenant),
                                        ("RUA_IMAP_OAUTH_CLIENT_ID", config.imap_oauth_client_id))
               if not value]
    if missing:
        raise IntakeError(f"RUA_IMAP_AUTH=microsoft needs {' and '.join(missing)} "
                          f"(the app registration's Directory and Application IDs)")
    authority = _https("RUA_IMAP_OAUTH_AUTHORITY", config.imap_oauth_authority)
    common = dict(tenant=config.imap_oauth_tenant, client_id=config.imap_oauth_client_id,
                  user=user, authority=(authority or MICROSOFT_AUTHORITY).rstrip("/"),
                  scope=config.imap_oauth_scope or MICROSOFT_SCOPE)
    if config.imap_oauth_cert_file:
        key, thumbprint, expires = _certificate(config.imap_oauth_cert_file)
        return MicrosoftApp(**common, private_key=key, thumbprint=thumbprint, expires=expires)
    if config.imap_oauth_secret_file:
        secret = read_secret("RUA_IMAP_OAUTH_SECRET_FILE", config.imap_oauth_secret_file)
    else:
        secret = config.imap_oauth_client_secret
    if not secret:
        raise IntakeError("RUA_IMAP_AUTH=microsoft needs a client secret "
                          "(RUA_IMAP_OAUTH_SECRET_FILE or RUA_IMAP_OAUTH_CLIENT_SECRET) or a "
                          "certificate (RUA_IMAP_OAUTH_CERT_FILE)")
    return MicrosoftApp(**common, secret=secret)


def _https(setting: str, url: str) -> str:
    """The URL of an override, which must be https: a secret or an assertion is sent to it."""
    if url and not url.lower().startswith("https://"):
        raise IntakeError(f"{setting} must be an https:// URL, not {url!r}")
    return url


def _certificate(path: str) -> tuple[str, str, datetime]:
    """The PEM private key, the SHA-1 thumbprint and the end (naive UTC) of the certificate in
    the same file."""
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
    expires = certificate.not_valid_after_utc.replace(tzinfo=None)
    return pem, certificate.fingerprint(hashes.SHA1()).hex(), expires


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
                            token_url=_https("RUA_IMAP_OAUTH_TOKEN_URL",
                                             config.imap_oauth_token_url) or key["token_uri"],
                            scope=config.imap_oauth_scope or GOOGLE_SCOPE,
                            private_key_id=str(key.get("private_key_id") or ""),
                            private_key=key["private_key"])
    from google.oauth2 import service_account
    try:
        service_account.Credentials.from_service_account_info(key_info(account))
    except ValueError:
        raise IntakeError(f"RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE {path}: its private_key is "
                          f"not a readable PEM key") from None
    return account


def _is_service_account_key(key, fields_needed: tuple[str, ...]) -> bool:
    if not isinstance(key, dict) or key.get("type") != "service_account":
        return False
    return all(isinstance(key.get(name), str) for name in fields_needed)


def key_info(account: GoogleAccount) -> dict:
    """The account as the JSON key google-auth reads (the token URL perhaps overridden)."""
    return {"type": "service_account", "client_email": account.email,
            "client_id": account.client_id, "private_key_id": account.private_key_id,
            "private_key": account.private_key, "token_uri": account.token_url}
