"""rua prune: delete the per-record rows retention no longer keeps."""
from __future__ import annotations

import click

from cli.common import fail
from cli.session import open_store
from store.clock import utcnow


@click.command()
@click.option("--days", type=click.IntRange(1), default=None,
              help="Keep this many days instead of RUA_RETENTION_DAYS.")
@click.option("--dry-run", is_flag=True, help="Count what would go; delete nothing.")
@click.option("--vacuum", is_flag=True,
              help="SQLite: rewrite the store afterwards to give all free space back (holds "
                   "an exclusive lock for its length: run it in a quiet hour).")
@click.pass_obj
def prune(config, days, dry_run, vacuum):
    """Delete the records of reports whose period ended more than RUA_RETENTION_DAYS days ago.

    Daily rollups, snapshots, score history, report summaries and events are kept, so every
    figure the API shows for the past stays the same; a pruned report's detail answers with
    empty record arrays and `records_pruned_at`. Deletes in batches of short transactions.
    """
    from store import retention
    days = days or config.retention_days
    if not days:
        click.echo("retention is off (RUA_RETENTION_DAYS=0): every record is kept")
        return
    with open_store(config):
        done = retention.prune(utcnow(), days, dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        click.echo(f"{verb} {done.records:,} records of {done.reports:,} reports whose period "
                   f"ended before {done.cutoff.isoformat()}; {done.kept:,} records kept")
        if dry_run:
            return
        if done.freed_pages:
            click.echo(f"gave {done.freed_pages:,} free pages back to the file system")
        elif config.is_sqlite and not retention.incremental_vacuum() and not vacuum:
            click.echo("this store was made before incremental vacuum: its free pages are "
                       "reused by new data; `rua prune --vacuum` in a quiet hour gives them back")
        if vacuum:
            if not config.is_sqlite:
                fail("--vacuum is for SQLite: on Postgres autovacuum reuses the space")
            retention.vacuum()
            click.echo("store rewritten; later prunes give space back by themselves")
