"""E-mail through RUA_SMTP_URL: one plain-text message per event and address.

`smtps://user:password@host:465?from=ADDRESS` speaks TLS from the start; `smtp://…` (port 587
unless given) upgrades with STARTTLS whenever the server offers it, and refuses to log in
without it, so a password never crosses the network in clear. Certificates are verified
(SSL_CERT_FILE names an extra CA bundle). The sender is `from=`, else the login when it is an
address, else rua@ this host's name. The Message-ID is the outbox row's webhook-id, the same
on every attempt, so a mailbox can tell a retry from a new alert.
"""
from __future__ import annotations

import re
import smtplib
import socket
import ssl
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from urllib.parse import parse_qs, unquote, urlsplit

from notify import DeliveryError

TIMEOUT_SECONDS = 20
# One address, no display name: what `rua notify add ORG email` accepts and what is sent to.
ADDRESS = re.compile(r"[^@\s<>(),;:\"\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")


@dataclass(frozen=True)
class Smtp:
    implicit_tls: bool
    host: str
    port: int
    username: str
    password: str = field(repr=False)
    sender: str


def valid_address(address: str) -> bool:
    return bool(ADDRESS.fullmatch(address)) and len(address) <= 320


def parse_url(url: str) -> Smtp:
    """The settings in RUA_SMTP_URL; ValueError saying what is wrong."""
    if not url:
        raise ValueError("RUA_SMTP_URL is not set: e-mail channels need an SMTP server")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"RUA_SMTP_URL is not a URL: {exc}") from None
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError("RUA_SMTP_URL must be smtp://[user:password@]host[:port][?from=ADDRESS] "
                         "or smtps://…")
    username, password = unquote(parts.username or ""), unquote(parts.password or "")
    sender = parse_qs(parts.query).get("from", [""])[0]
    sender = sender or (username if valid_address(username) else f"rua@{socket.getfqdn()}")
    if not valid_address(sender):
        raise ValueError(f"RUA_SMTP_URL's sender {sender!r} is not an e-mail address")
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
    """Hand the message to the server once; DeliveryError when it is not accepted."""
    context = ssl.create_default_context()
    try:
        if smtp.implicit_tls:
            client = smtplib.SMTP_SSL(smtp.host, smtp.port, timeout=TIMEOUT_SECONDS,
                                      context=context)
        else:
            client = smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT_SECONDS)
        with client:
            _secure_and_log_in(client, smtp, context)
            client.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        raise DeliveryError(f"SMTP {smtp.host}:{smtp.port}: {type(exc).__name__}: {exc}") from None


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
