"""`rua sources refresh`: enrich sending sources now and store what was learned."""
from __future__ import annotations

import ipaddress

import click

from cli.common import echo_err, fail
from cli.lookup import resolve_org
from cli.session import open_store
from store.clock import utcnow


@click.group()
def sources():
    """Sending sources (the scheduler enriches new ones within minutes, old ones daily)."""


@sources.command("refresh")
@click.option("--org", "org_ref", metavar="ORG", help="Only this organization's sources.")
@click.option("--ip", "ips", metavar="IP", multiple=True,
              help="Only this address (any spelling); repeat for more.")
@click.pass_obj
def refresh(config, org_ref, ips):
    """Enrich the sources that are due (never enriched, or not in the last day), or every
    --ip IP given, whatever its age: reverse DNS and FCrDNS, sending service, network and
    country, DNSBL reputation, then each source's classification and its records' verdicts.

    With RUA_OFFLINE=1 nothing is looked up and nothing is stored.
    """
    from snapshotter.jobs import refresh_dirty
    from sources import jobs
    for ip in ips:
        try:
            ipaddress.ip_address(ip.strip())
        except ValueError:
            fail(f"--ip {ip!r} is not an IP address")
    with open_store(config):
        org = resolve_org(org_ref) if org_ref else None
        done = jobs.refresh(config, utcnow(), org_id=org and org.id, ips=list(ips) or None)
        if ips and not done.skipped and not done.sources:
            fail("no source has " + ("that address" if len(ips) == 1 else "those addresses")
                 + (f" in {org.name}" if org else ""))
        if done.skipped:
            echo_err(f"nothing refreshed: {done.skipped}")
            return
        refresh_dirty(utcnow(), report_address=config.report_address)
    for problem in done.problems:
        echo_err(problem)
    click.echo(f"{done.sources} source(s) enriched, {done.reclassified} record(s) reclassified")
