"""What every rua subcommand shares: the database connection and one way to fail."""
from __future__ import annotations

import contextlib
import sys

import click

from store import open_db
from store.clock import rfc3339


class UsageFailure(click.ClickException):
    """Bad input: one clear line on stderr, exit status 2, nothing written."""
    exit_code = 2

    def show(self, file=None):
        click.echo(f"rua: error: {self.message}", err=True)


def fail(message: str):
    raise UsageFailure(message)


@contextlib.contextmanager
def connect(config):
    """Open the configured database for the length of one command."""
    database = open_db(config.database_url)
    try:
        with database.connection_context():
            yield database
    finally:
        if hasattr(database, "close_all"):
            database.close_all()


def echo_err(message: str):
    click.echo(message, err=True)
    sys.stderr.flush()


def moment_or_never(value) -> str:
    """A stored instant as the contract writes it, or "never"."""
    if value is None:
        return "never"
    return rfc3339(value)
