"""E-mail delivery through a real SMTP server in the test process (aiosmtpd)."""
from __future__ import annotations

import base64
import email
import email.policy

import pytest
import trustme
from aiosmtpd.controller import Controller

from notify import email as mail
from notify.drain import drain
from store import channels
from store.models import Outbox
from tests.notify.conftest import raise_alert
from tests.notify.receivers import MailSink, smtp_server
from tests.servers import free_port

LOGIN = ("alerts", "s3cret pass")


@pytest.fixture
def ca(tmp_path, monkeypatch):
    """A CA the SMTP client trusts alone (SSL_CERT_FILE), as it would a public one."""
    authority = trustme.CA()
    authority.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    return authority


@pytest.fixture
def mailbox(org):
    return channels.add(org.id, "email", "ops@example.com", None)


def test_an_alert_is_mailed_as_plain_text_with_its_link(org, mailbox, ca, clock, config):
    controller, sink = smtp_server(ca, login=LOGIN)
    url = f"smtp://{LOGIN[0]}:s3cret%20pass@localhost:{controller.port}?from=rua@example.net"
    try:
        raise_alert(org)
        assert drain(config.replace(smtp_url=url), clock).delivered == 1
    finally:
        controller.stop()
    [(sender, recipients, text)] = sink.messages
    message = email.message_from_string(text, policy=email.policy.default)
    assert (sender, recipients) == ("rua@example.net", ["ops@example.com"])
    assert message.get_content_type() == "text/plain"
    assert message["Subject"] == "[rua] DNS record missing: No SPF record for example.com " \
                                 "(example.com)"
    assert message["Message-ID"] == f"<{Outbox.get().webhook_id}@example.net>"
    body = message.get_content()
    assert "Link: /domains/example.com/dns" in body and "Publish one." in body


def test_smtps_speaks_tls_from_the_start(org, mailbox, ca, clock, config):
    controller, sink = smtp_server(ca, login=LOGIN, implicit_tls=True)
    url = f"smtps://{LOGIN[0]}:s3cret%20pass@localhost:{controller.port}?from=rua@example.net"
    try:
        raise_alert(org)
        assert drain(config.replace(smtp_url=url), clock).delivered == 1, Outbox.get().last_error
    finally:
        controller.stop()
    assert len(sink.messages) == 1


def test_a_wrong_password_is_a_failed_attempt_kept_for_retry(org, mailbox, ca, clock, config):
    controller, sink = smtp_server(ca, login=LOGIN)
    url = f"smtp://{LOGIN[0]}:wrong@localhost:{controller.port}?from=rua@example.net"
    try:
        raise_alert(org)
        assert drain(config.replace(smtp_url=url), clock).retried == 1
    finally:
        controller.stop()
    assert not sink.messages and "SMTPAuthenticationError" in Outbox.get().last_error


def test_a_reply_echoing_the_password_never_reaches_the_stored_error_or_the_log(
        org, mailbox, ca, clock, config, caplog):
    controller, _ = smtp_server(ca, login=LOGIN, echo=True)
    url = f"smtp://{LOGIN[0]}:s3cret%20pass@localhost:{controller.port}?from=rua@example.net"
    try:
        raise_alert(org)
        with caplog.at_level("INFO", logger="rua.notify"):
            assert drain(config.replace(smtp_url=url), clock).retried == 1
    finally:
        controller.stop()
    error = Outbox.get().last_error
    assert error.startswith(f"SMTP localhost:{controller.port}: SMTPAuthenticationError: "
                            f"535 5.7.8 ")
    assert error.endswith("alerts *** refused (***)")
    in_base64 = base64.b64encode(b"\0alerts\0s3cret pass").decode()
    for text in (error, caplog.text):
        assert "s3cret" not in text and in_base64 not in text


def test_a_server_without_starttls_is_never_sent_the_password(org, mailbox, clock, config):
    controller = Controller(MailSink(), hostname="127.0.0.1", port=free_port())
    controller.start()
    url = f"smtp://{LOGIN[0]}:secret@127.0.0.1:{controller.port}?from=rua@example.net"
    try:
        raise_alert(org)
        assert drain(config.replace(smtp_url=url), clock).retried == 1
    finally:
        controller.stop()
    assert "offers no STARTTLS: the password is not sent in clear" in Outbox.get().last_error


def test_no_smtp_setting_is_a_failed_attempt_that_says_so(org, mailbox, clock, config):
    raise_alert(org)
    assert drain(config, clock).retried == 1
    assert "RUA_SMTP_URL is not set" in Outbox.get().last_error


@pytest.mark.parametrize("url, settings", [
    ("smtp://mail.example.net?from=a@example.net",
     (False, "mail.example.net", 587, "", "", "a@example.net")),
    ("smtps://me%40example.net:p%3Ass@mail.example.net",
     (True, "mail.example.net", 465, "me@example.net", "p:ss", "me@example.net")),
    ("smtp://relay:2525?from=rua@example.org", (False, "relay", 2525, "", "", "rua@example.org")),
])
def test_smtp_urls_are_read(url, settings):
    smtp = mail.parse_url(url)
    assert (smtp.implicit_tls, smtp.host, smtp.port, smtp.username, smtp.password,
            smtp.sender) == settings
    assert "p:ss" not in repr(smtp)


@pytest.mark.parametrize("url, complaint", [
    ("", "not set"), ("http://mail.example.net", "must be smtp://"),
    ("smtp://mail.example.net:99999", "cannot be read"),
    ("smtp://mail.example.net?from=nobody", "is not an e-mail address"),
])
def test_bad_smtp_urls_say_what_is_wrong(url, complaint):
    with pytest.raises(ValueError, match=complaint):
        mail.parse_url(url)


@pytest.mark.parametrize("url", [
    "smtp://alerts:Sup3r/S3cret-pw@mail.example.net",     # the '/' makes 'Sup3r' a "port"
    "smtp://alerts:25/S3cret-pw@mail.example.net",        # ... and here a port and a path
    "smtps://alerts:Sup3r#S3cret@mail.example.net",
    "smtp://alerts:Sup3r?S3cret@mail.example.net",
])
def test_a_url_that_cannot_be_read_is_reported_without_its_parts(url):
    with pytest.raises(ValueError, match="cannot be read") as refused:
        mail.parse_url(url)
    assert "Sup3r" not in str(refused.value) and "S3cret" not in str(refused.value)


def test_a_password_with_a_slash_never_reaches_the_stored_error_or_the_log(
        org, mailbox, clock, config, caplog):
    config = config.replace(smtp_url="smtp://alerts:Sup3r/S3cret-pw@mail.example.net")
    raise_alert(org)
    with caplog.at_level("INFO", logger="rua.notify"):
        assert drain(config, clock).retried == 1
    error = Outbox.get().last_error
    assert error.startswith("RUA_SMTP_URL cannot be read")
    for text in (error, caplog.text):
        assert "Sup3r" not in text and "S3cret" not in text
