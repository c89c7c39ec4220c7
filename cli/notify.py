"""Alert channels: `rua notify add|list|remove|test|send`. Deliverable events are pushed to them."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cli.common import echo_err, fail, moment_or_never
from cli.lookup import resolve_org
from cli.options import OneOf
from cli.session import open_store
from guard.shown import masked
from store.event_types import EVENT_TYPES, DELIVERABLE

if TYPE_CHECKING:
    from store import channels

KINDS = ("webhook", "email")


class NotifyGroup(click.Group):
    """The help names the outbox's retry limit when it is shown: importing store.outbox at the
    top would load the models for every `rua` command."""

    def get_help(self, ctx):
        from store.outbox import MAX_ATTEMPTS
        return super().get_help(ctx).replace("{attempts}", str(MAX_ATTEMPTS))


@click.group(cls=NotifyGroup)
def notify():
    """Alert channels: where an organization's deliverable events are pushed.

    \b
    A webhook is signed per Standard Webhooks (webhook-id, webhook-timestamp,
    webhook-signature "v1,<base64 HMAC-SHA256>") with a whsec_ secret shown once by `add`.
    An e-mail goes through RUA_SMTP_URL as plain text with the event's link.
    Each event is queued for its channels when it is raised and sent by `rua notify send` or
    the scheduler's minutely job: retried with doubling waits (1 minute to 6 hours) and given
    up after {attempts} attempts, which `rua notify list` shows.
    """


@notify.command("add")
@click.argument("org_ref", metavar="ORG")
@click.argument("kind", type=OneOf(KINDS, "channel kind"), metavar="webhook|email")
@click.argument("target", metavar="URL|ADDRESS")
@click.option("--types", default="", metavar="TYPE,...",
              help="Only these event types (comma-separated; default: every deliverable type: "
                   + ", ".join(DELIVERABLE) + ").")
@click.pass_obj
def notify_add(config, org_ref, kind, target, types):
    """Send ORG's deliverable events to a webhook URL or an e-mail ADDRESS.

    \b
    A webhook URL must be https:// to a host whose every address is public (unicast on the
    internet); private, loopback and link-local ones are refused unless
    RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE=1 (a lab's setting, which also allows http:// to a
    loopback address). The URL is checked now and again before every send.
    """
    from notify import targets, webhook
    from rules.email_address import email_address
    from store import channels
    wanted = _types(types)
    target = target.strip()
    if kind == "webhook":
        try:
            targets.check(target, config)
        except targets.RefusedUrl as exc:
            fail(f"webhook URL refused: {exc}")
    else:
        address = email_address(target)
        if address is None:
            fail(f"{target!r} is not an e-mail address (name@domain, nothing else)")
        target = address
    secret = webhook.new_secret() if kind == "webhook" else None
    with open_store(config) as database:
        with database.atomic():
            org = resolve_org(org_ref)
            row = channels.add(org.id, kind, target, wanted, secret)
    scope = ", ".join(wanted) if wanted else "every deliverable type"
    click.echo(f"added {kind} channel {row.id} for {org.name} ({scope})")
    if kind == "email":
        _check_smtp(config)
        return
    click.echo("its signing secret is shown only now; the receiver verifies with it:")
    click.echo(secret)


@notify.command("list")
@click.argument("org_ref", metavar="[ORG]", required=False)
@click.pass_obj
def notify_list(config, org_ref):
    """Channels (of ORG, or all) with their deliveries: pending, delivered, given up."""
    from store import channels
    with open_store(config):
        org_id = resolve_org(org_ref).id if org_ref else None
        rows = channels.states(org_id)
        given_up = {s.channel.id: channels.failures(s.channel.id) for s in rows if s.failed}
    if not rows:
        click.echo("no channels" + (f" for {org_ref}" if org_ref else ""))
    for state in rows:
        _show(state, given_up.get(state.channel.id, []))


@notify.command("remove")
@click.argument("channel_id")
@click.pass_obj
def notify_remove(config, channel_id):
    """Delete channel CHANNEL_ID and its queued deliveries (events stay)."""
    from store import channels
    with open_store(config):
        if not channels.remove(channel_id.strip()):
            fail(f"no channel {channel_id}")
    click.echo(f"removed channel {channel_id}")


@notify.command("test")
@click.argument("channel_id")
@click.pass_obj
def notify_test(config, channel_id):
    """Send channel CHANNEL_ID a test message now (type "test"), outside the queue."""
    from notify.drain import send_test
    from store import channels
    with open_store(config):
        row = channels.get(channel_id.strip())
        if row is None:
            fail(f"no channel {channel_id}")
        error = send_test(row, config)
    if error:
        echo_err(f"rua: test message to {_target(row)} failed: {error}")
        raise SystemExit(1)
    click.echo(_accepted(row, config))


def _accepted(row, config) -> str:
    """Who took the test message: the webhook receiver itself, or, for e-mail, the SMTP server
    (whether it reaches the mailbox is that server's to do, and not known here)."""
    if row.kind == "webhook":
        return f"test message accepted by {_target(row)}"
    from notify import email
    smtp = email.parse_url(config.smtp_url)
    return (f"test message to {row.target} accepted by the SMTP server {smtp.host}:{smtp.port} "
            "(delivery to the mailbox is up to it)")


@notify.command("send")
@click.pass_obj
def notify_send(config):
    """Send every due delivery now (the scheduler does this every minute)."""
    from notify.drain import drain
    with open_store(config):
        result = drain(config)
    deferred = ""
    if result.deferred:
        deferred = f", {result.deferred} left for the next run (their receiver was slow)"
    click.echo(f"delivered {result.delivered}, to retry {result.retried}, "
               f"given up {result.failed}{deferred}")


def _types(text: str) -> list[str] | None:
    wanted = list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    known = {t.code for t in EVENT_TYPES}
    for code in wanted:
        if code not in known:
            fail(f"unknown event type {code!r} (deliverable: {', '.join(DELIVERABLE)})")
        if code not in DELIVERABLE:
            fail(f"{code} is shown in the app only, never pushed "
                 f"(deliverable: {', '.join(DELIVERABLE)})")
    return wanted or None


def _check_smtp(config) -> None:
    from notify import email
    try:
        email.parse_url(config.smtp_url)
    except ValueError as exc:
        echo_err(f"rua: note: {exc}; sending to this channel fails until that is put right")


def _show(state: channels.ChannelState, given_up: list) -> None:
    channel = state.channel
    types = ",".join(channel.types) if channel.types else "all deliverable"
    last = moment_or_never(state.last_delivered_at)
    click.echo(f"{channel.id}  {state.org_name}  {channel.kind}  {_target(channel)}  [{types}]  "
               f"pending {state.pending}, delivered {state.delivered} (last {last}), "
               f"failed {state.failed}")
    if state.last_error and (state.pending or given_up):
        click.echo(f"    last error: {state.last_error}")
    for row in given_up:
        click.echo(f"    gave up {row.webhook_id} after {row.attempts} attempts at "
                   f"{moment_or_never(row.failed_at)}: {row.last_error}")
    if len(given_up) < state.failed:
        click.echo(f"    … and {state.failed - len(given_up)} more given up")


def _target(channel) -> str:
    """A webhook URL with its query values masked (they are often tokens); an address whole."""
    return masked(channel.target, query=True)
