"""`rua notify add|list|remove|test|send`: channels, the secret shown once, delivery states."""
from __future__ import annotations

import pytest

from notify.webhook import NOT_REACHED
from store import events
from store.models import NotifyChannel, Outbox
from tests.cli.outcome import assert_refused, ok
from tests.notify.receivers import WebhookReceiver, smtp_server
from tests.notify.test_email import ca  # noqa: F401

PUBLIC = "https://93.184.216.34/hook"        # an address: nothing to resolve


@pytest.fixture
def lab(monkeypatch):
    """Receivers here listen on 127.0.0.1, which only a lab's setting lets rua reach."""
    monkeypatch.setenv("RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE", "1")


@pytest.fixture
def receiver(lab):
    server = WebhookReceiver("whsec_" + "A" * 43 + "=").start()
    yield server
    server.stop()


def add_hook(rua, receiver, *options) -> tuple[str, str]:
    """Add a webhook channel to the receiver and point the receiver at its secret."""
    lines = ok(rua("notify", "add", "Acme", "webhook", receiver.url, *options))
    secret = lines[-1]
    receiver.use_secret(secret)
    return NotifyChannel.get(NotifyChannel.target == receiver.url).id, secret


def alert(org, type_="dns_record_missing", key="example.com"):
    events.raise_event(org.id, type_, f"{type_}:{key}",
                       title=f"No SPF record for {key}", domain=key)


def test_add_webhook_prints_its_secret_once_on_the_last_line(rua, acme, lab):
    result = rua("notify", "add", "Acme", "webhook", "http://127.0.0.1:9/in")
    lines = ok(result)
    assert lines[0].startswith("added webhook channel ") and "every deliverable type" in lines[0]
    secret = lines[-1]
    assert secret.startswith("whsec_") and result.stdout.count(secret) == 1
    assert NotifyChannel.get().secret == secret
    assert secret not in "".join(ok(rua("notify", "list")))


def test_a_webhook_is_tested_against_a_verifying_receiver(rua, acme, receiver):
    channel_id, _ = add_hook(rua, receiver)
    assert ok(rua("notify", "test", channel_id)) == [f"test message accepted by {receiver.url}"]
    [(_, payload)] = receiver.accepted
    assert payload["type"] == "test" and payload["data"]["organization"] == "Acme"
    assert Outbox.select().count() == 0          # a test is not queued


def test_a_failed_test_says_why_and_exits_1(rua, acme, receiver):
    channel_id, _ = add_hook(rua, receiver)
    receiver.stop()
    result = rua("notify", "test", channel_id)
    assert result.exit_code == 1 and "the receiver could not be reached" in result.stderr


@pytest.mark.parametrize("url, complaint", [
    ("http://93.184.216.34/hook", "only for a receiver on this host"),
    ("https://10.0.0.8/hook", "not a public address"),
    ("https://169.254.169.254/latest", "not a public address"),
    ("https://[64:ff9b::a9fe:a9fe]/latest", "not a public address"),
    ("hooks.example.com", "https://HOST/PATH"),
])
def test_add_refuses_a_url_the_rule_forbids(rua, acme, url, complaint):
    assert_refused(rua("notify", "add", "Acme", "webhook", url), "webhook URL refused", complaint)
    assert NotifyChannel.select().count() == 0


def test_private_networks_are_allowed_by_the_setting(rua, acme, monkeypatch):
    monkeypatch.setenv("RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE", "1")
    ok(rua("notify", "add", "Acme", "webhook", "https://10.0.0.8/hook"))


def test_types_are_deliverable_codes(rua, acme):
    assert_refused(rua("notify", "add", "Acme", "webhook", PUBLIC, "--types", "nope"),
                   "unknown event type 'nope'")
    assert_refused(rua("notify", "add", "Acme", "webhook", PUBLIC, "--types", "weak_dkim_key"),
                   "weak_dkim_key is shown in the app only")
    ok(rua("notify", "add", "Acme", "webhook", PUBLIC, "--types", "no_reports, new_sender"))
    assert NotifyChannel.get().types == ["no_reports", "new_sender"]


def test_add_email_checks_the_address_and_notes_a_missing_smtp_setting(rua, acme):
    assert_refused(rua("notify", "add", "Acme", "email", "ops"), "is not an e-mail address")
    assert_refused(rua("notify", "add", "Acme", "email", "a..b@example.com"),
                   "is not an e-mail address")
    result = rua("notify", "add", "Acme", "email", "ops@example.com")
    assert ok(result)[0].startswith("added email channel")
    assert "RUA_SMTP_URL is not set" in result.stderr and "whsec_" not in result.stdout


def test_send_delivers_and_list_shows_the_state(rua, acme, receiver):
    channel_id, _ = add_hook(rua, receiver, "--types", "dns_record_missing")
    alert(acme)
    alert(acme, "no_reports")                     # not a type this channel wants
    assert ok(rua("notify", "send")) == ["delivered 1, to retry 0, given up 0"]
    [line] = ok(rua("notify", "list", "Acme"))
    assert line.startswith(f"{channel_id}  Acme  webhook  {receiver.url}  [dns_record_missing]")
    assert "pending 0, delivered 1 (last 20" in line and line.endswith("failed 0")


def test_list_shows_deliveries_given_up_and_the_last_error(rua, acme, receiver):
    channel_id, _ = add_hook(rua, receiver)
    alert(acme)
    receiver.stop()
    assert ok(rua("notify", "send")) == ["delivered 0, to retry 1, given up 0"]
    lines = ok(rua("notify", "list"))
    assert "pending 1, delivered 0 (last never), failed 0" in lines[0]
    assert lines[1] == "    last error: " + NOT_REACHED
    row = Outbox.get()
    (Outbox.update(attempts=12, failed_at=row.next_attempt_at, last_error="HTTP 500")
     .where(Outbox.id == row.id).execute())
    lines = ok(rua("notify", "list", "Acme"))
    assert "pending 0, delivered 0 (last never), failed 1" in lines[0]
    assert lines[-1].startswith(f"    gave up {row.webhook_id} after 12 attempts at ")
    assert lines[-1].endswith(": HTTP 500")


def test_remove_deletes_the_channel_and_its_queue(rua, acme, receiver):
    channel_id, _ = add_hook(rua, receiver)
    alert(acme)
    assert ok(rua("notify", "remove", channel_id)) == [f"removed channel {channel_id}"]
    assert NotifyChannel.select().count() == Outbox.select().count() == 0
    assert_refused(rua("notify", "remove", channel_id), f"no channel {channel_id}")
    assert ok(rua("notify", "list")) == ["no channels"]


def test_help_explains_signing_retries_and_the_url_rule(rua):
    text = " ".join(" ".join(ok(rua("notify", "--help"))).split())
    assert "Standard Webhooks" in text and "given up after 12 attempts" in text
    add = " ".join(" ".join(ok(rua("notify", "add", "--help"))).split())
    assert "loopback" in add and "RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE" in add
    assert "no_reports" in add


def test_list_masks_webhook_query_values(rua, acme, lab):
    ok(rua("notify", "add", "Acme", "webhook", "http://127.0.0.1:9/in?token=t0psecret&x=1"))
    [line] = ok(rua("notify", "list"))
    assert "http://127.0.0.1:9/in?token=***&x=***" in line and "t0psecret" not in line


def test_an_smtp_password_never_reaches_the_cli_output(rua, acme, monkeypatch):
    monkeypatch.setenv("RUA_SMTP_URL", "smtp://alerts:Sup3r/S3cret-pw@mail.example.net")
    added = rua("notify", "add", "Acme", "email", "ops@example.com")
    alert(acme)
    sent = rua("notify", "send")
    listed = rua("notify", "list")
    channel_id = NotifyChannel.get().id
    tested = rua("notify", "test", channel_id)
    assert "cannot be read" in added.stderr and "cannot be read" in listed.stdout
    assert tested.exit_code == 1 and "cannot be read" in tested.stderr
    for result in (added, sent, listed, tested):
        assert "Sup3r" not in result.output + result.stderr
        assert "S3cret" not in result.output + result.stderr


def test_an_email_test_says_the_smtp_server_took_it_not_the_recipient(rua, acme, ca, monkeypatch):
    controller, sink = smtp_server(ca, login=None)
    monkeypatch.setenv("RUA_SMTP_URL", f"smtp://localhost:{controller.port}?from=rua@example.net")
    try:
        channel_id = ok(rua("notify", "add", "Acme", "email", "ops@example.com"))[0].split()[3]
        lines = ok(rua("notify", "test", channel_id))
    finally:
        controller.stop()
    assert lines == [f"test message to ops@example.com accepted by the SMTP server "
                     f"localhost:{controller.port} (delivery to the mailbox is up to it)"]
    assert [recipients for _, recipients, _ in sink.messages] == [["ops@example.com"]]
