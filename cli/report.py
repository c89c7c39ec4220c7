"""`rua report copies|replace`: conflicting copies kept aside, and putting one in place of the
stored report (or back)."""
from __future__ import annotations

import click

from cli.common import fail
from cli.lookup import resolve_org
from cli.session import open_store


@click.group()
def report():
    """Stored reports and the conflicting copies kept aside beside them."""


@report.command("copies")
@click.argument("org_ref", metavar="ORG")
@click.pass_obj
def copies(config, org_ref):
    """List the copies of ORG's (id or name) reports kept aside, oldest first: conflicting
    copies that arrived (arrived) and reports an operator's replace set aside (replaced)."""
    from ingest.printable import bounded, printable, report_named
    from store import report_copies
    from store.clock import from_epoch, rfc3339
    with open_store(config):
        org = resolve_org(org_ref)
        rows = report_copies.of_org(org.id)
    if not rows:
        click.echo(f"no kept copies for {org.name}")
    for row in rows:
        period = f"{from_epoch(row.date_begin):%Y-%m-%d} to {from_epoch(row.date_end):%Y-%m-%d}"
        named = f"{report_named(row.org_name, row.report_id)} for {bounded(row.domain)}"
        click.echo(f"copy {row.id}  {row.kind}  {row.reason}  {rfc3339(row.received_at)}  "
                   f"{printable(named)}, {period}")


@report.command("replace")
@click.argument("copy_id", metavar="COPY", type=click.IntRange(1))
@click.option("--yes", is_flag=True, help="Do it (without it: only say what would change).")
@click.pass_obj
def replace(config, copy_id, yes):
    """Put kept copy COPY in place of the stored report under its key: the stored report's
    figures are taken out, the copy's put in (records, rollups, day totals, source facts, TLS
    days), and the stored report is kept aside in its turn, so replacing that copy undoes it.
    The API shows the new figures after the next snapshot refresh."""
    from ingest import replacing
    from ingest.model import ReportError
    from ingest.printable import printable, report_named
    with open_store(config):
        try:
            swap = replacing.replace(copy_id, apply=yes, max_records=config.max_records)
        except ReportError as exc:
            fail(printable(str(exc)))
    verb = "replaced" if yes else "would replace"
    what = swap.replaced or (f"no stored report "
                             f"({report_named(swap.copy.org_name, swap.copy.report_id)})")
    click.echo(f"copy {swap.copy.id} {verb} {printable(what)}")
    for name, before, after in swap.figures:
        click.echo(f"  {name}: {before:,} -> {after:,}")
    if not yes:
        click.echo("dry run: nothing changed; add --yes to replace")
        return
    click.echo(f"stored as report {swap.stored_id}")
    if swap.kept_id is not None:
        click.echo(f"the replaced report is kept as copy {swap.kept_id}; "
                   f"`rua report replace {swap.kept_id} --yes` undoes this")
