"""E-mail through RUA_SMTP_URL: one plain-text message per event and address.

`smtps://user:password@host:465?from=ADDRESS` speaks TLS from the start; `smtp://…` (port 587
unless given) upgrades with STARTTLS whenever the server offers it, and refuses to log in
without it, so a password never crosses the network in clear. Certificates are verified
(SSL_CERT_FILE names an extra CA bundle). The sender is `from=`, else the login when it is an
address, else rua@ this host's name. The Message-ID is the outbox row's webhook-id, the same
on every attempt, so a mailbox can tell a retry from a new alert.
"""
from __future__ import annotations

import smtplib
import socket
import ssl
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from urllib.parse import parse_qs, unquote, urlsplit

from guard.connect import Deadline, Unreachable
from guard.shown import scrubbed
from notify import DeliveryError, NotReached
from rules.email_address import email_address

# The whole attempt (connect, TLS, login, send) ends by then, however slowly the server talks.
DEADLINE_SECONDS = 20
UNREADABLE = ("RUA_SMTP_URL cannot be read: it must be smtp://[user:password@]host[:port]"
              "[?from=ADDRESS] or smtps://…, with any '/', '?', '#', '@' or ':' in the user "
              "name or password written %-encoded (%2F, %3F, %23, %40, %3A)")
# One address, no display name: what `rua notify add ORG email` accepts and what is sent to.


@dataclass(frozen=True)
class Smtp:
    implicit_tls: bool
    host: str
    port: int
    username: str
    password: str = field(repr=False)
    sender: str


def parse_url(url: str) -> Smtp:
    """The settings in RUA_SMTP_URL; ValueError saying what is wrong, never echoing the URL's
    parts (a password with an unencoded '/' would be read as a port or a path)."""
    if not url:
        raise ValueError("RUA_SMTP_URL is not set: e-mail channels need an SMTP server")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        port, parts = None, None
    if parts is None or parts.path not in ("", "/") or parts.fragment:
        raise ValueError(UNREADABLE)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError(UNREADABLE)
    username, password = unquote(parts.username or ""), unquote(parts.password or "")
    given = parse_qs(parts.query).get("from", [""])[0]
    if given:
        sender = email_address(given)
        if sender is None:
            raise ValueError("RUA_SMTP_URL's from= is not an e-mail address")
    else:        # the login when it is an address, else rua at this host's own name
        sender = email_address(username) or f"rua@{socket.getfqdn()}"
    implicit = parts.scheme == "smtps"
    return Smtp(implicit, parts.hostname, port or (465 if implicit else 587), username,
                password, sender)


def compose(smtp: Smtp, to: str, subject: str, text: str, message_id: str,
            now: datetime) -> EmailMessage:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = smtp.sender, to, subject
    message["Date"] = format_datetime(now.replace(tzinfo=timezone.utc), usegmt=True)
    message["Message-ID"] = f"<{message_id}@{smtp.sender.rpartition('@')[2]}>"
    message.set_content(text)
    return message


def send(smtp: Smtp, message: EmailMessage) -> None:
    """Hand the message to the server once; DeliveryError when it is not accepted (NotReached
    when no exchange took place, the deadline included)."""
    context = ssl.create_default_context()
    with Deadline(DEADLINE_SECONDS) as deadline:
        try:
            if smtp.implicit_tls:
                client = _WatchedSMTPS(deadline, smtp.host, smtp.port, context=context)
            else:
                client = _WatchedSMTP(deadline, smtp.host, smtp.port)
            with client:
                _secure_and_log_in(client, smtp, context)
                client.send_message(message)
        except smtplib.SMTPException as exc:
            if deadline.expired:    # the watchdog's cut reads as the server hanging up
                raise NotReached(_late(smtp)) from None
            said = scrubbed(_server_said(exc), [smtp.password])
            raise DeliveryError(f"SMTP {smtp.host}:{smtp.port}: {type(exc).__name__}: "
                                f"{said}") from None
        except (OSError, Unreachable) as exc:
            if deadline.expired:
                raise NotReached(_late(smtp)) from None
            raise NotReached(f"SMTP {smtp.host}:{smtp.port}: {type(exc).__name__}") from None


def _late(smtp: Smtp) -> str:
    return f"SMTP {smtp.host}:{smtp.port}: no answer within {DEADLINE_SECONDS} s"


def _server_said(exc: smtplib.SMTPException) -> str:
    """The server's reply as it said it ("535 5.7.8 …"), not as Python's repr of its bytes."""
    reply = getattr(exc, "smtp_error", None)
    if isinstance(reply, bytes):
        return f"{exc.smtp_code} {reply.decode('utf-8', 'replace')}"
    return str(exc)


class _WatchedSMTP(smtplib.SMTP):
    """smtplib's client whose connection the deadline's watchdog shuts when time is up."""

    def __init__(self, deadline: Deadline, host: str, port: int, **options):
        self._deadline = deadline
        super().__init__(host, port, timeout=deadline.left(), **options)

    def _get_socket(self, host, port, timeout):
        sock = super()._get_socket(host, port, self._deadline.left())
        self._deadline.watch(sock)
        return sock


class _WatchedSMTPS(smtplib.SMTP_SSL, _WatchedSMTP):
    """Implicit TLS: SMTP_SSL wraps the socket _WatchedSMTP opened (and watches)."""

    def __init__(self, deadline: Deadline, host: str, port: int, *, context: ssl.SSLContext):
        self._deadline = deadline       # SMTP_SSL calls SMTP.__init__ itself, not ours
        smtplib.SMTP_SSL.__init__(self, host, port, timeout=deadline.left(), context=context)


def _secure_and_log_in(client: smtplib.SMTP, smtp: Smtp, context: ssl.SSLContext) -> None:
    client.ehlo()
    if not smtp.implicit_tls:
        if client.has_extn("starttls"):
            client.starttls(context=context)
            client.ehlo()
        elif smtp.username:
            raise DeliveryError(f"SMTP {smtp.host}:{smtp.port} offers no STARTTLS: "
                                "the password is not sent in clear")
    if smtp.username:
        client.login(smtp.username, smtp.password)
