"""RUA_IMAP_URL and the IMAP password, read into plain values with one-line errors."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from config import ConfigError
from config import read_secret as read_secret_file


class IntakeError(Exception):
    """The mailbox cannot be used (settings, network, TLS, login): the message is one line."""


@dataclass(frozen=True)
class Mailbox:
    """Where to read: implicit TLS (imaps) or STARTTLS (imap), the user and the folder."""
    implicit_tls: bool
    host: str
    port: int
    user: str
    folder: str

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


def parse_url(url: str) -> Mailbox:
    """imaps://user@host[:993]/FOLDER or imap://user@host[:143]/FOLDER (STARTTLS); no password."""
    if not url:
        raise IntakeError("RUA_IMAP_URL is not set (e.g. imaps://dmarc@mail.example.net/INBOX)")
    parts = urlsplit(url)
    if parts.scheme not in ("imaps", "imap"):
        raise IntakeError("RUA_IMAP_URL must start with imaps:// or imap://")
    if parts.password is not None:
        raise IntakeError("RUA_IMAP_URL holds a password: put it in RUA_IMAP_PASSWORD_FILE "
                          "or RUA_IMAP_PASSWORD instead")
    try:
        port = parts.port
    except ValueError:
        raise IntakeError("RUA_IMAP_URL has an invalid port") from None
    if not parts.hostname or not parts.username:
        raise IntakeError("RUA_IMAP_URL needs a user and a host (imaps://user@host/INBOX)")
    implicit = parts.scheme == "imaps"
    return Mailbox(implicit_tls=implicit, host=parts.hostname,
                   port=port or (993 if implicit else 143), user=unquote(parts.username),
                   folder=unquote(parts.path.lstrip("/")) or "INBOX")


def password(config) -> str:
    """RUA_IMAP_PASSWORD_FILE's content less one trailing newline, else RUA_IMAP_PASSWORD."""
    if config.imap_password_file:
        secret = read_secret("RUA_IMAP_PASSWORD_FILE", config.imap_password_file)
    else:
        secret = config.imap_password
    if not secret:
        raise IntakeError("no IMAP password: set RUA_IMAP_PASSWORD_FILE (or RUA_IMAP_PASSWORD)")
    return secret


def read_secret(setting: str, path: str) -> str:
    """A secret file's content less one trailing newline (config.read_secret), refused as an
    IntakeError."""
    try:
        return read_secret_file(setting, path)
    except ConfigError as exc:
        raise IntakeError(str(exc)) from None
