"""`rua sources refresh`: enrich sending sources now and store what was learned."""
from __future__ import annotations

import ipaddress
import sys
import time

import click

from cli.common import echo_err, fail
from cli.lookup import resolve_org
from cli.session import open_store
from store.clock import rfc3339, utcnow


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

    A source DNS told nothing of (no reverse name, no blocklist answer: a dead resolver) keeps
    what was known, is not counted as enriched and makes the exit status 1; an organization
    none of whose sources DNS told anything of is tried again after 15 minutes, then 30, and so
    on up to a day. On a terminal, a progress line shows on standard error.

    With RUA_OFFLINE=1 nothing is looked up and nothing is stored.
    """
    from snapshotter.refreshes import refresh_dirty
    from sources import jobs
    for ip in ips:
        try:
            ipaddress.ip_address(ip.strip())
        except ValueError:
            fail(f"--ip {ip!r} is not an IP address")
    with open_store(config):
        org = resolve_org(org_ref) if org_ref else None
        shown = Progress() if sys.stderr.isatty() else None     # quiet under cron or a pipe
        try:
            done = jobs.refresh(config, utcnow(), org_id=org and org.id, ips=list(ips) or None,
                                progress=shown and shown.update)
        finally:
            if shown is not None:
                shown.close()
        if ips and not done.skipped and not done.sources:
            fail("no source has " + ("that address" if len(ips) == 1 else "those addresses")
                 + (f" in {org.name}" if org else ""))
        if done.skipped:
            echo_err(f"nothing refreshed: {done.skipped}")
            return
        refresh_dirty(utcnow(), config)
    for problem in done.problems:
        echo_err(problem)
    for org_id, after in sorted(done.waiting.items()):
        echo_err(f"organization {org_id}: DNS told nothing of its sources last time; "
                 f"next try after {rfc3339(after)}")
    click.echo(f"{done.sources} source(s) enriched, {done.reclassified} record(s) reclassified")
    if done.unlearned:
        why = done.unanswered or "DNS could not tell"
        echo_err(f"rua: error: {done.unlearned} source(s) not enriched: {why}; they keep what "
                 "was known and are tried again later")
        click.get_current_context().exit(1)


class Progress:
    """One line on a terminal, rewritten as sources are done (at most ten times a second)."""

    def __init__(self):
        self.shown_at = 0.0

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.shown_at < 0.1:
            return
        self.shown_at = now
        click.echo(f"\renriching sources: {done:,} of {total:,}", err=True, nl=False)

    def close(self) -> None:
        if self.shown_at:
            click.echo("", err=True)

