"""The `rua` command: one console script, one subcommand per job."""
from __future__ import annotations

import importlib
import os

import click

from config import Config, ConfigError
from cli.common import fail

SUBCOMMAND_MODULES = ("cli.admin", "cli.keys", "cli.domains", "cli.ingest", "cli.demo",
                      "cli.snapshot", "cli.dns", "cli.fetch", "cli.sources", "cli.notify",
                      "cli.events", "cli.backup", "cli.prune")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


for _name in SUBCOMMAND_MODULES:
    importlib.import_module(_name).register(main)
