"""The `rua` command: one console script, one subcommand per job.

Each command module imports only click and light modules at its top; what a command needs
beyond that (the models, ingest, DNS, delivery) it imports when it runs, so `rua --help` and a
small `rua ingest` start without loading the rest.
"""
from __future__ import annotations

import os

import click

from cli import (admin, backup, demo, dns, domains, events, export, fetch, ingest, keys, notify,
                 prune, report, snapshot, sources)
from cli.common import RuaGroup, fail
from config import Config, ConfigError


@click.group(cls=RuaGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.pass_context
def main(ctx):
    """rua: DMARC aggregate (RUA) reports as a fast, read-only JSON API.

    Settings come from RUA_* environment variables (see README.md); the default store is a
    SQLite file under ./var/.
    """
    try:
        ctx.obj = Config.from_env(os.environ)
    except ConfigError as exc:
        fail(str(exc))


main.add_command(admin.init)
main.add_command(admin.org)
main.add_command(admin.plan)
main.add_command(admin.member)
main.add_command(keys.key)
main.add_command(domains.domain)
main.add_command(ingest.ingest)
main.add_command(demo.demo)
main.add_command(snapshot.snapshot)
main.add_command(snapshot.scheduler)
main.add_command(dns.dns)
main.add_command(fetch.fetch)
main.add_command(sources.sources)
main.add_command(notify.notify)
main.add_command(events.event)
main.add_command(backup.backup)
main.add_command(backup.restore)
main.add_command(prune.prune)
main.add_command(report.report)
main.add_command(export.export)
