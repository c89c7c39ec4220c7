"""`rua snapshot`: recompute snapshots now (after ingest, or by hand)."""
from __future__ import annotations

import time

import click

from cli.common import fail
from cli.session import open_store
from store.clock import utcnow


def find_org(text: str):
    from peewee import DoesNotExist
    from store.models import Organization
    try:
        return Organization.get((Organization.id == text.upper()) | (Organization.name == text))
    except DoesNotExist:
        fail(f"no organization {text!r} (give its id or name)")


def refresh_touched(config, err: bool = False):
    """After ingest: refresh the organizations it marked dirty (the store is already open)."""
    from snapshotter import refreshes
    started = time.perf_counter()
    results = refreshes.refresh_dirty(utcnow(), config)
    click.echo(f"snapshots: refreshed {len(results)} organization(s) in "
               f"{time.perf_counter() - started:.2f} s", err=err)


@click.command("snapshot")
@click.option("--org", "org", metavar="ORG", help="Only this organization (id or name).")
@click.option("--all", "every", is_flag=True, help="Every organization, dirty or not.")
@click.option("--daily", is_flag=True,
              help="The after-midnight job: yesterday's final score-history row of every "
                   "organization, then every snapshot (for cron at 00:05 UTC).")
@click.pass_obj
def snapshot(config, org, every, daily):
    """Recompute snapshots now: dirty organizations, or --org ORG, or --all, or --daily."""
    from snapshotter import refreshes
    if sum(map(bool, (org, every, daily))) > 1:
        fail("give one of --org ORG, --all or --daily")
    with open_store(config):
        now, started = utcnow(), time.perf_counter()
        if org:
            results = refreshes.refresh_many([find_org(org).id], now, config)
        elif every:
            results = refreshes.refresh_all(now, config)
        elif daily:
            results = refreshes.daily(now, config)
        else:
            results = refreshes.refresh_dirty(now, config)
        for r in results:
            click.echo(f"{r.org_id}: {r.blobs} snapshots, {r.bytes} bytes")
        click.echo(f"refreshed {len(results)} organization(s) in "
                   f"{time.perf_counter() - started:.2f} s")

