"""Monitored domains: `rua domain add|list|remove`, in the one normal form of store.domain_names."""
from __future__ import annotations

import click

from cli.common import fail, moment_or_never
from cli.lookup import resolve_org
from cli.session import open_store
from store.domain_names import InvalidDomain, normalize


@click.group()
def domain():
    """Domains an organization monitors (added by hand, or introduced by its reports)."""


@domain.command("add")
@click.argument("org_ref", metavar="ORG")
@click.argument("name", metavar="DOMAIN")
@click.pass_obj
def domain_add(config, org_ref, name):
    """Monitor DOMAIN for ORG (id or name); a domain its reports introduced becomes `both`."""
    from peewee import IntegrityError
    from store.models import Domain
    ascii_name = normal_name(name)
    with open_store(config) as database:
        target = resolve_org(org_ref)
        try:
            with database.atomic():
                row = Domain.get_or_none((Domain.org == target) & (Domain.name == ascii_name))
                if row is None:
                    Domain.create(org=target, name=ascii_name, source="manual")
                    source = "manual"
                elif row.source == "auto":
                    row.source = source = "both"
                    row.save(only=[Domain.source])
                else:
                    fail(f"{ascii_name} is already monitored by {target.name}")
                _mark_dirty(target)
        except IntegrityError:
            fail(f"{ascii_name} is already monitored by {target.name}")
    click.echo(f"{ascii_name} ({source}) in {target.name}")


@domain.command("list")
@click.argument("org_ref", metavar="ORG")
@click.pass_obj
def domain_list(config, org_ref):
    """List the domains of ORG: name, source (manual, auto, both), the DMARC, TLS-RPT and
    forensic verification states, and when DNS was last checked (`rua dns check`)."""
    from store.models import Domain
    with open_store(config):
        target = resolve_org(org_ref)
        rows = list(target.domains.order_by(Domain.name))
    table = [("DOMAIN", "SOURCE", "DMARC", "TLS-RPT", "FORENSIC", "DNS CHECKED")] + [
        (row.name, row.source, row.dmarc_state, row.tlsrpt_state, row.forensic_state,
         moment_or_never(row.dns_checked_at))
        for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line, row in zip(table, [None] + rows):
        text = "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
        if row is not None and row.verified_source == "inherited" and row.inherited_from:
            text += f"  (through {row.inherited_from})"
        click.echo(text)


@domain.command("remove")
@click.argument("org_ref", metavar="ORG")
@click.argument("name", metavar="DOMAIN")
@click.pass_obj
def domain_remove(config, org_ref, name):
    """Stop monitoring DOMAIN by hand for ORG.

    A `manual` or `auto` domain is removed (reports that name it later bring it back as
    `auto`); a `both` domain stays, as `auto`, because its reports still introduce it.
    Stored reports are kept either way.
    """
    from store.models import Domain
    ascii_name = normal_name(name)
    with open_store(config) as database:
        with database.atomic():
            target = resolve_org(org_ref)
            row = Domain.get_or_none((Domain.org == target) & (Domain.name == ascii_name))
            if row is None:
                fail(f"{target.name} does not monitor {ascii_name}")
            if row.source == "both":
                row.source = "auto"
                row.save(only=[Domain.source])
                click.echo(f"{ascii_name} stays in {target.name} as auto (its reports introduce it)")
            else:
                row.delete_instance()
                click.echo(f"removed {ascii_name} from {target.name}")
            _mark_dirty(target)


def _mark_dirty(org):
    """The organization's overview and cards list its domains: the snapshotter must recompute."""
    from store import events
    events.mark_dirty(org.id)


def normal_name(name: str) -> str:
    try:
        return normalize(name)
    except InvalidDomain as exc:
        fail(f"invalid domain name: {exc}")
