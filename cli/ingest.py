"""`rua ingest`: store the aggregate reports found in files, archives, mail and stdin."""
from __future__ import annotations

import os
import sys
import time

import click

from cli.common import fail
from cli.ingest_display import Display, Summary
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
@click.option("--snapshot", "snapshot", is_flag=True,
              help="Refresh the snapshots of the organizations this run touched right after it "
                   "(otherwise `rua scheduler` or `rua snapshot` does within a minute).")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.pass_obj
def ingest(config, org_ref, output, paths, snapshot=False):
    """Store the DMARC aggregate and SMTP TLS reports found in each PATH.

    PATH is a report (.xml, TLS .json, .gz, .zip), an e-mail message (.eml), an mbox, a
    Maildir, a directory (searched recursively) or - for standard input. Each report goes to the
    organization that monitors its policy domain (or its organizational domain) unless --org
    is given. A report already stored (same reporter, report id, domain and period, and the
    same content; for a TLS report the same reporter, report id and period) counts as a
    duplicate and is not stored again; the same key with other content is refused as a
    conflicting copy. DMARC failure (forensic) reports are refused by name. Input files are
    only read.

    Exit status: 0 when nothing was refused, 1 when some report or file was refused (the good
    ones beside it are still stored), 2 for a usage error.
    """
    _check_paths(paths)
    with open_store(config) as _database:
        org = resolve_org(org_ref) if org_ref else None
        summary = _run(config, org, output, paths)
        if snapshot:
            from cli.snapshot import refresh_touched
            refresh_touched(config, err=output == "json")
    click.get_current_context().exit(1 if summary.refused else 0)


def _run(config, org, output: str, paths) -> Summary:
    from dnscheck.mail_signatures import MailSignatures
    from ingest.pipeline import ingest_paths
    summary, started = Summary(), time.monotonic()
    display = Display(output, paths, summary)
    try:
        attest = MailSignatures(config)     # each DKIM key looked up once per run
        for result in ingest_paths(paths, config=config, org=org, progress=display.tick,
                                   attest=attest):
            summary.add(result)
            display.file_done(result)
    finally:
        display.close()
    summary.seconds = time.monotonic() - started
    display.emit(summary.line(), err=output == "json")
    return summary


def _check_paths(paths):
    for path in paths:
        if path == "-":
            if sys.stdin.isatty():
                fail("- reads a report from standard input, which is a terminal: pipe one in")
        elif not os.path.exists(path):
            fail(f"{path}: no such file or directory")
