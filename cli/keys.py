"""API keys: `rua key create|list|revoke`. A key is printed once and stored only as its digest."""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

import click

from cli.common import echo_err, fail, moment_or_never
from cli.lookup import resolve_key, resolve_member, resolve_org
from cli.options import Day, OneOf
from cli.session import open_store
from store.access import SCOPES
from store.clock import utcnow

if TYPE_CHECKING:
    from store.models import ApiKey

MAX_NAME = 200


@click.group()
def key():
    """API keys: each belongs to one organization and one member."""


@key.command("create")
@click.argument("org_ref", metavar="ORG")
@click.option("--member", "email", required=True, metavar="EMAIL",
              help="The member the key acts for; the key can read only what the member's role allows.")
@click.option("--name", default="", help="A label to recognise the key by, e.g. `grafana`.")
@click.option("--scope", type=OneOf(SCOPES, "scope"), default="read", show_default=True,
              help="read or full; every v1 endpoint accepts both.")
@click.option("--expires", type=Day(), default=None,
              help="The key stops working at 00:00 UTC on this day (default: never).")
@click.pass_obj
def key_create(config, org_ref, email, name, scope, expires):
    """Create a key for ORG (id or name) and print it once, alone on the last line.

    Only its SHA-256 digest and its first 12 characters are stored: copy the key now.
    """
    from store import keys
    from store.models import ApiKey
    name = name.strip()
    if len(name) > MAX_NAME:
        fail(f"a key name has at most {MAX_NAME} characters")
    if not name.isprintable():
        fail("a key name cannot contain control characters such as a line break")
    expires_at = _expiry(expires)
    plaintext = keys.new_key()
    with open_store(config) as database:
        with database.atomic():
            target = resolve_org(org_ref)
            owner = resolve_member(target, email)
            row = ApiKey.create(org=target, member=owner, name=name, scope=scope,
                                digest=keys.digest(plaintext), prefix=keys.display_prefix(plaintext),
                                expires_at=expires_at)
    if target.plan == "none":
        echo_err(f"rua: note: {target.name} is on plan none: the key is refused until the plan changes")
    until = f", expires {expires.isoformat()}" if expires else ""
    click.echo(f"created key {row.id} ({scope}{until}) for {owner.email} in {target.name}; "
               "it is shown only now:")
    click.echo(plaintext)


@key.command("list")
@click.argument("org_ref", metavar="ORG")
@click.pass_obj
def key_list(config, org_ref):
    """List the keys of ORG, revoked ones included: id, name, prefix, scope, last use, state."""
    from store import usage
    from store.models import ApiKey
    with open_store(config):
        target = resolve_org(org_ref)
        rows = list(target.keys.order_by(ApiKey.created_at, ApiKey.id))
        # Any hours: per_key's last_at is each key's last request however long ago.
        counted = usage.per_key(target.id, 0, 0)
    now = utcnow()
    width = max((len(row.name) for row in rows), default=0)
    for row in rows:
        name = row.name or "-"
        last = usage.last_use(row.last_used_at, counted.get(row.id, (0, 0, 0))[2])
        click.echo(f"{row.id}  {name:<{max(width, 1)}}  {row.prefix}  {row.scope:<4}  "
                   f"last used {moment_or_never(last)}  {_state(row, now)}")


@key.command("revoke")
@click.argument("key_id")
@click.pass_obj
def key_revoke(config, key_id):
    """Revoke key KEY_ID at once; it stays listed, with its usage."""
    from store.models import ApiKey
    with open_store(config) as database:
        with database.atomic():
            row = resolve_key(key_id)
            if row.revoked_at is None:
                row.revoked_at = utcnow()
                row.save(only=[ApiKey.revoked_at])
                click.echo(f"revoked key {row.id} ({row.prefix})")
            else:
                click.echo(f"key {row.id} ({row.prefix}) was already revoked at "
                           f"{moment_or_never(row.revoked_at)}")


def _expiry(day: datetime.date | None) -> datetime.datetime | None:
    if day is None:
        return None
    moment = datetime.datetime.combine(day, datetime.time())
    if moment <= utcnow():
        fail(f"--expires {day.isoformat()} is not in the future (the key would never work)")
    return moment


def _state(row: ApiKey, now: datetime.datetime) -> str:
    if row.revoked_at is not None:
        return f"revoked {moment_or_never(row.revoked_at)}"
    if row.expires_at is not None:
        return f"{'expired' if row.expires_at <= now else 'expires'} {moment_or_never(row.expires_at)}"
    return "active"
