"""Administration: `rua init`, organizations, plans and members."""
from __future__ import annotations

import click

from cli.common import fail
from cli.lookup import resolve_org
from cli.options import OneOf
from cli.session import open_store, redacted
from store.access import ROLES
from store.plans import NAMES as PLANS

MAX_ORG_NAME = 200


@click.command()
@click.pass_obj
def init(config):
    """Create the schema, or upgrade it to the latest version (safe to run again)."""
    from store import make_private, meter_path, sqlite_path
    from store.migrations import UnknownSchema, current_version, latest_version, migrate
    with open_store(config, need_schema=False) as database:
        try:
            applied = migrate(database)
        except UnknownSchema as exc:
            fail(f"{exc}: run a rua that knows it")
        version = current_version(database)
        reshaped = _mark_older_shapes_dirty()
    for number, description in applied:
        click.echo(f"applied migration {number}: {description}")
    if not applied:
        click.echo("nothing to apply")
    if reshaped:
        click.echo(f"{reshaped} organization(s) hold snapshots of an older shape: marked for "
                   "the snapshotter to recompute")
    click.echo(f"schema version {version} (latest {latest_version()}) in {redacted(config.database_url)}")
    path = sqlite_path(config.database_url)
    if path is not None and path != ":memory:":
        # A backup or a move must take this file too.
        click.echo(f"request counters in {meter_path(path)}")
        for name in make_private(path):     # any file of the store others could read
            click.echo(f"made {name} readable by its owner only (0600)")


def _mark_older_shapes_dirty() -> int:
    """Mark dirty each organization holding a snapshot stored under another shape version than
    its kind's (an upgrade changed a body), so the snapshotter recomputes them all at once
    rather than requests one by one; how many."""
    from snapshotter.jobs import SHAPE_VERSIONS
    from store import events, snapshots
    org_ids = snapshots.orgs_with_other_shapes(SHAPE_VERSIONS)
    for org_id in org_ids:
        events.mark_dirty(org_id)
    return len(org_ids)


@click.group()
def org():
    """Organizations: each owns its members, keys, domains and reports."""


@org.command("create")
@click.argument("name")
@click.option("--plan", type=OneOf(PLANS, "plan"), default="free", show_default=True,
              help="The plan sets quotas; `none` means no API access.")
@click.pass_obj
def org_create(config, name, plan):
    """Create an organization called NAME and print its id."""
    from peewee import IntegrityError
    from store.models import Organization
    name = _org_name(name)
    with open_store(config) as database:
        if Organization.get_or_none(Organization.name == name):
            fail(f"an organization named {name!r} already exists")
        try:
            with database.atomic():
                created = Organization.create(name=name, plan=plan)
        except IntegrityError:
            fail(f"an organization named {name!r} already exists")
    click.echo(created.id)


@org.command("list")
@click.pass_obj
def org_list(config):
    """List organizations, one per line: id, name, plan."""
    from store.models import Organization
    with open_store(config) as database:
        rows = list(Organization.select().order_by(Organization.name))
    width = max((len(row.name) for row in rows), default=0)
    for row in rows:
        click.echo(f"{row.id}  {row.name:<{width}}  {row.plan}")


@click.group()
def plan():
    """Plans: free, team, unlimited, or none (no API access)."""


@plan.command("set")
@click.argument("org_ref", metavar="ORG")
@click.argument("new_plan", metavar="PLAN", type=OneOf(PLANS, "plan"))
@click.pass_obj
def plan_set(config, org_ref, new_plan):
    """Put organization ORG (id or name) on PLAN."""
    from store.models import Organization
    with open_store(config) as database:
        with database.atomic():
            target = resolve_org(org_ref)
            old = target.plan
            target.plan = new_plan
            target.save(only=[Organization.plan])
    click.echo(f"{target.name}: plan {old} -> {new_plan}")


@click.group()
def member():
    """Members: people of an organization, each with one role."""


@member.command("add")
@click.argument("org_ref", metavar="ORG")
@click.argument("email")
@click.option("--role", required=True, type=OneOf(ROLES, "role"),
              help="What the member's keys may read: owner and admin everything; analyst all "
                   "but /api-keys/usage; viewer analytics, domains and events (no reports); "
                   "billing /api-keys/usage only.")
@click.pass_obj
def member_add(config, org_ref, email, role):
    """Add EMAIL to organization ORG (id or name) with a role."""
    from peewee import IntegrityError
    from store.models import Member
    from rules.email_address import email_address
    address = email_address(email.strip().lower())
    if address is None:
        fail(f"{email!r} is not an e-mail address")
    with open_store(config) as database:
        target = resolve_org(org_ref)
        try:
            with database.atomic():
                added = Member.create(org=target, email=address, role=role)
        except IntegrityError:
            fail(f"{address} is already a member of {target.name}")
    click.echo(f"{added.id}  {address}  {role}  in {target.name}")


@member.command("list")
@click.argument("org_ref", metavar="ORG")
@click.pass_obj
def member_list(config, org_ref):
    """List the members of organization ORG: id, e-mail, role."""
    from store.models import Member
    with open_store(config):
        target = resolve_org(org_ref)
        rows = list(target.members.order_by(Member.email))
    for row in rows:
        click.echo(f"{row.id}  {row.email}  {row.role}")


def _org_name(text: str) -> str:
    from store.ids import normalize_ulid
    name = text.strip()
    if not name:
        fail("an organization name cannot be empty")
    if len(name) > MAX_ORG_NAME:
        fail(f"an organization name has at most {MAX_ORG_NAME} characters")
    if not name.isprintable():
        fail("an organization name cannot contain control characters such as a line break")
    if normalize_ulid(name):
        # Commands accept an id or a name for ORG: a name shaped like an id would be ambiguous.
        fail(f"{name!r} looks like an organization id; choose another name")
    return name
