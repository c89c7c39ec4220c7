"""rua backup and rua restore: a consistent copy of the store, and a store made from one."""
from __future__ import annotations

import shlex

import click

from cli.common import fail
from cli.session import open_store, redacted
from store import sqlite_path
from store.backup import (BackupError, backup_sqlite, postgres_dump_command,
                          postgres_restore_command, restore_sqlite)


@click.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.pass_obj
def backup(config, path):
    """Copy the store to PATH as of one moment, while the API serves and ingest runs.

    SQLite: the store and its request counters (PATH's .meter file beside it), each by SQLite's
    online backup; PATH must not exist. Postgres: checks the server answers and prints the
    pg_dump command to run (the password comes from PGPASSWORD or ~/.pgpass).
    """
    with open_store(config):
        pass                            # the store answers and its schema is current
    store_path = sqlite_path(config.database_url)
    if store_path is None:
        click.echo("the store is on Postgres: back it up with")
        click.echo("  " + shlex.join(postgres_dump_command(config.database_url, path)))
        return
    try:
        copied = backup_sqlite(store_path, path)
    except BackupError as exc:
        fail(str(exc))
    for one in copied:
        click.echo(f"copied {one.source} to {one.target} ({one.size:,} bytes)")


@click.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.pass_obj
def restore(config, path):
    """Make the store (RUA_DATABASE_URL, which must be empty) from a backup made by rua backup,
    then bring its schema up to date as rua init does.

    SQLite: the backup is refused, and nothing written, unless it passes SQLite's integrity
    check and holds a schema this rua knows with exactly the tables, indexes and triggers
    rua makes. Postgres: prints the pg_restore command for a dump made with
    pg_dump --format=custom (restore only dumps you made).
    """
    store_path = sqlite_path(config.database_url)
    if store_path is None:
        click.echo("the store is on Postgres: restore a pg_dump into an empty database with")
        click.echo("  " + shlex.join(postgres_restore_command(config.database_url, path)))
        click.echo(f"then run rua init against {redacted(config.database_url)}")
        return
    try:
        restored = restore_sqlite(path, store_path)
    except BackupError as exc:
        fail(str(exc))
    for one in restored.copied:
        click.echo(f"restored {one.target} from {one.source} ({one.size:,} bytes)")
    for number, description in restored.applied:
        click.echo(f"applied migration {number}: {description}")
