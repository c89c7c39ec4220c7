"""`rua ingest`: store the aggregate reports found in files, archives, mail and stdin."""
from __future__ import annotations

import os
import sys
import time

import click

from cli.common import fail
from cli.ingest_display import Display, Summary
from cli.ingest_plan import DryRunPlan
from cli.lookup import resolve_org
from cli.options import OneOf
from cli.session import open_store


@click.command()
@click.option("--org", "org_ref", metavar="ORG",
              help="Store every report for this organization (id or name) instead of routing "
                   "each one to the organization that monitors its domain.")
@click.option("--format", "output", type=OneOf(("text", "json"), "format"), default="text",
              show_default=True,
              help="text: one line per file and a summary; json: one JSON object per file "
                   "on stdout (the summary goes to stderr).")
@click.option("--dry-run", "dry_run", is_flag=True,
              help="Read and judge everything, store nothing, and say what the run would do: "
                   "reports per organization, the domains it would add or needs, the days "
                   "covered, what it would refuse and why (a line per file only for the "
                   "files refused for another reason than their domain).")
@click.option("--add-domains", "add_domains", is_flag=True,
              help="With --org: the reports' policy domains become the organization's "
                   "monitored domains, past the caps on domains added by reports.")
@click.option("--snapshot", "snapshot", is_flag=True,
              help="Refresh the snapshots of the organizations this run touched right after it "
                   "(otherwise `rua scheduler` or `rua snapshot` does within a minute).")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.pass_obj
def ingest(config, org_ref, output, paths, snapshot=False, dry_run=False, add_domains=False):
    """Store the DMARC aggregate and SMTP TLS reports found in each PATH.

    PATH is a report (.xml, TLS .json, .gz, .zip), an e-mail message (.eml), an mbox, a
    Maildir, a directory (searched recursively) or - for standard input. Each report goes to the
    organization that monitors its policy domain (or its organizational domain) unless --org
    is given. A report already stored (same reporter, report id, domain and period, and the
    same content; for a TLS report the same reporter, report id and period) counts as a
    duplicate and is not stored again; the same key with other content is refused as a
    conflicting copy. DMARC failure (forensic) reports are refused by name. Input files are
    only read.

    A report for a domain the organization does not monitor yet adds it, within
    RUA_MAX_AUTO_DOMAINS and RUA_MAX_AUTO_DOMAINS_PER_DAY (a mail folder can hold forged
    reports for any domain); to bring an archive in one go, look first with --dry-run, then
    run with --org ORG --add-domains.

    Exit status: 0 when nothing was refused, 1 when some report or file was refused (the good
    ones beside it are still stored), 2 for a usage error.
    """
    _check_paths(paths)
    if add_domains and not org_ref:
        fail("--add-domains takes the domains into one organization: give it with --org ORG")
    if snapshot and dry_run:
        fail("--snapshot has nothing to refresh after --dry-run, which stores nothing")
    with open_store(config) as _database:
        org = resolve_org(org_ref) if org_ref else None
        summary = _run(config, org, output, paths, dry_run, add_domains)
        if snapshot:
            from cli.snapshot import refresh_touched
            refresh_touched(config, err=output == "json")
    click.get_current_context().exit(1 if summary.refused else 0)


def _run(config, org, output: str, paths, dry_run: bool, add_domains: bool) -> Summary:
    from dnscheck.mail_signatures import MailSignatures
    from ingest.dry_run import DryRun
    from ingest.pipeline import ingest_paths
    summary, started, plan = Summary(), time.monotonic(), DryRunPlan()
    display = Display(output, paths, summary)
    run = DryRun if dry_run else ingest_paths
    attest = MailSignatures(config)     # each DKIM key looked up once per run
    results = run(paths, config=config, org=org, add_domains=add_domains,
                  progress=display.tick, attest=attest)
    try:
        for result in results:
            summary.add(result)
            if not dry_run:
                display.file_done(result)
                continue
            plan.add(result)
            if len(result.refusals) > len(result.unmonitored):   # refusals the plan does not sum
                display.file_done(result)
    finally:
        display.close()
    summary.seconds = time.monotonic() - started
    err = output == "json"
    if dry_run:
        for line in plan.lines(_org_names(), results.added, summary.days_line()):
            display.emit(line, err=err)
        return summary
    display.emit(summary.line(), err=err)
    if summary.days_line():
        display.emit(summary.days_line(), err=err)
    return summary


def _org_names() -> dict[str, str]:
    from store.models import Organization
    return dict(Organization.select(Organization.id, Organization.name).tuples())


def _check_paths(paths):
    for path in paths:
        if path == "-":
            if sys.stdin.isatty():
                fail("- reads a report from standard input, which is a terminal: pipe one in")
        elif not os.path.exists(path):
            fail(f"{path}: no such file or directory")
