"""`rua dns check`: the live DNS check now, stored for monitored domains and printed."""
from __future__ import annotations

import click

from cli.common import echo_err
from cli.domains import normal_name
from cli.lookup import resolve_org
from cli.options import OneOf
from cli.session import open_store
from store.clock import rfc3339, utcnow
from store.encoding import dumps

STATE_NAMES = (("dmarc_state", "DMARC"), ("tlsrpt_state", "TLS-RPT"),
               ("forensic_state", "forensic"))


@click.group()
def dns():
    """The live DNS check of monitored domains (the scheduler runs it hourly)."""


@dns.command("check")
@click.option("--org", "org_ref", metavar="ORG", help="Only this organization's domains.")
@click.option("--format", "shape", type=OneOf(("text", "json"), "format"), default="text",
              show_default=True, help="json: one object per domain per line.")
@click.argument("names", metavar="[DOMAIN]...", nargs=-1)
@click.pass_obj
def dns_check(config, org_ref, shape, names):
    """Check DOMAINs now (default: every monitored domain, or those of --org ORG).

    Results are stored on the domains an organization monitors and their snapshots refreshed;
    a DOMAIN no organization (or not ORG) monitors is checked and printed, not stored. With
    RUA_OFFLINE=1 nothing is looked up: every kind is unknown and nothing is stored.
    """
    from dnscheck import jobs
    from snapshotter.refreshes import refresh_dirty
    wanted = list(dict.fromkeys(normal_name(n) for n in names)) or None
    with open_store(config):
        org = resolve_org(org_ref) if org_ref else None
        monitored = _monitored(org, wanted)
        others = [n for n in wanted or [] if n not in monitored]
        if not monitored and not others:
            echo_err("no monitored domains to check (add one with `rua domain add ORG DOMAIN`)")
            return
        if config.offline:        # an offline check learns nothing: never stored over a real one
            runs = [jobs.check_unstored(config, list(monitored) + others)]
        else:
            runs = [jobs.check_stored(config, org_id=org and org.id, names=wanted),
                    jobs.check_unstored(config, others)]
            # The organizations whose results changed: their health answers it from now on.
            refresh_dirty(utcnow(), config)
    results = [check for run in runs for check in run.checks]
    unanswered = next((run.unanswered for run in runs if run.unanswered), "")
    if unanswered:        # every kind of every domain would say the same: said once
        echo_err(f"rua: error: {unanswered}: {len(_once(results))} domain(s) unknown "
                 "(check RUA_DNS_NAMESERVERS or /etc/resolv.conf)")
        click.get_current_context().exit(1)
    order = {name: i for i, name in enumerate(wanted or sorted({r.domain for r in results}))}
    for result in sorted(_once(results), key=lambda r: (order.get(r.domain, 0), r.domain)):
        click.echo(dumps(result.line()).decode() if shape == "json" else _text(result))
    failed = [name for run in runs for name in run.failed]
    if failed:
        raise click.ClickException(f"the check of {', '.join(failed)} failed: see the log above")


def _monitored(org, wanted) -> list[str]:
    from store.models import Domain
    query = Domain.select(Domain.name).distinct()
    if org is not None:
        query = query.where(Domain.org == org)
    if wanted is not None:
        query = query.where(Domain.name.in_(wanted))
    return sorted(name for (name,) in query.tuples())


def _once(results):
    """A name stored for two organizations with different selectors is printed once (the first)."""
    seen = {}
    for result in results:
        seen.setdefault(result.domain, result)
    return list(seen.values())


def _text(result) -> str:
    checked = rfc3339(result.checked_at)
    lines = [f"{result.domain}  (checked {checked})"]
    for kind, entry in result.dns.items():
        where = f" [from {entry['inherited_from']}]" if entry.get("inherited_from") else ""
        lines.append(f"  {kind:<8} {entry['status']:<8} {entry['details']}{where}")
    states = ", ".join(f"{label} {result.states[f]}" for f, label in STATE_NAMES)
    lookups = "?" if result.spf_lookups is None else result.spf_lookups
    lines.append(f"  states: {states}; SPF lookups {lookups}")
    return "\n".join(lines)
