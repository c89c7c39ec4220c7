"""`rua fetch`: ingest the report mail waiting in a mailbox (IMAP or Maildir) and file it."""
from __future__ import annotations

import time

import click

from cli.common import echo_err, fail
from cli.ingest_display import Display, Summary
from cli.lookup import resolve_org
from cli.options import OneOf
from cli.session import open_store
from intake.mailbox_url import IntakeError
from store import locks

# The scheduler's fetch job takes the same lock (jobs/scheduler.py: job.<name>).
LOCK = "job.fetch"
org_option = click.option(
    "--org", "org_ref", metavar="ORG",
    help="Store every report for this organization (id or name) instead of routing each one "
         "to the organization that monitors its domain.")
format_option = click.option(
    "--format", "output", type=OneOf(("text", "json"), "format"), default="text",
    show_default=True,
    help="text: one line per message and a summary; json: one JSON object per message on "
         "stdout (the summary goes to stderr).")
snapshot_option = click.option(
    "--snapshot", is_flag=True,
    help="Refresh the snapshots of the organizations this run touched right after it.")


@click.group()
def fetch():
    """Ingest the DMARC report mail waiting in a mailbox, as `rua ingest` does with files."""


@fetch.command("imap")
@org_option
@format_option
@snapshot_option
@click.option("--watch", is_flag=True,
              help="Stay connected (IMAP IDLE) and ingest each message as it arrives; "
                   "reconnects by itself; snapshots are refreshed after each batch.")
@click.option("--check", is_flag=True,
              help="Only log in and say what a fetch would take and where it would file it; "
                   "nothing is read, stored or moved.")
@click.pass_obj
def imap_command(config, org_ref, output, snapshot, watch, check):
    """Ingest every message in the mailbox named by RUA_IMAP_URL, then move each one.

    A message whose reports are all stored (now or before) goes to RUA_IMAP_DONE_FOLDER, one
    with anything refused to RUA_IMAP_REFUSED_FOLDER; both are created when missing. A message
    moves only after its reports are committed, and nothing is ever deleted. The password comes
    from RUA_IMAP_PASSWORD_FILE or RUA_IMAP_PASSWORD, never from the command line; with
    RUA_IMAP_AUTH=microsoft or google, rua obtains an OAuth token instead (docs/mailboxes.md).

    A fetch moves every message of the folder: give rua a folder (or mailbox) for reports only,
    and try --check first, which logs in, counts and moves nothing.

    Exit status: 0 when nothing was refused, 1 when some message was refused (the good reports
    beside it are still stored), 2 for a usage error or a mailbox that cannot be used
    (unreachable, login or token refused, untrusted certificate, connection lost).
    """
    from intake import imap, imap_login
    try:
        mailbox = imap.parse_url(config.imap_url)
        login = imap_login.for_config(config, mailbox)
    except IntakeError as exc:
        fail(str(exc))
    if check:
        _check(config, mailbox, login)
        return
    with open_store(config):
        org = resolve_org(org_ref) if org_ref else None
        if watch:
            _watch(config, org, output)
        try:
            client = imap.connect(config, mailbox, login)
        except IntakeError as exc:
            fail(str(exc))
        try:
            summary = _locked(config, output, lambda handle: imap.drain(
                client, mailbox, config, handle, org=org))
        except IntakeError as exc:
            fail(str(exc))
        except imap.DROPPED as exc:
            fail(f"connection to {mailbox.where} lost ({imap.one_line(exc)}): the messages "
                 f"not yet moved stay in {mailbox.folder} and are read again next time")
        finally:
            imap.close(client)
        _finish(config, output, summary, snapshot)


def _check(config, mailbox, login):
    from intake import imap_check
    try:
        checked = imap_check.check(config, mailbox, login)
    except IntakeError as exc:
        fail(str(exc))
    for line in checked.lines():
        click.echo(line)


@fetch.command("maildir")
@org_option
@format_option
@snapshot_option
@click.option("--all", "include_cur", is_flag=True,
              help="Read cur/ too (messages already seen), not only new/.")
@click.argument("path", type=click.Path(file_okay=False))
@click.pass_obj
def maildir_command(config, org_ref, output, snapshot, include_cur, path):
    """Ingest the messages in the Maildir PATH's new/ folder, then mark each one seen.

    Marking seen moves the file to cur/ with the S flag, as a mail client does; a message with
    anything refused is flagged (F) as well. Nothing is ever deleted.

    Exit status: 0 when nothing was refused, 1 when some message was refused, 2 for a usage
    error.
    """
    from intake import maildir
    with open_store(config):
        org = resolve_org(org_ref) if org_ref else None
        try:
            summary = _locked(config, output, lambda handle: maildir.drain(
                path, config, handle, org=org, include_cur=include_cur))
        except IntakeError as exc:
            fail(str(exc))
        _finish(config, output, summary, snapshot)


def _locked(config, output: str, drain, quiet_when_empty: bool = False) -> Summary | None:
    """One batch under the fetch lock, shown as `rua ingest` shows files; None when busy."""
    with locks.exclusive(LOCK, config.lock_dir) as held:
        if not held:
            return None
        summary, started = Summary(), time.monotonic()
        display = Display(output, (), summary)
        try:
            drain(lambda result: (summary.add(result), display.file_done(result)))
        finally:
            display.close()
        summary.seconds = time.monotonic() - started
        if summary.files or not quiet_when_empty:
            display.emit(summary.line(), err=output == "json")
        return summary


def _finish(config, output: str, summary: Summary | None, snapshot: bool):
    if summary is None:
        fail("another `rua fetch` (or the scheduler's fetch job) is running: try again later")
    if snapshot and summary.stored:
        from cli.snapshot import refresh_touched
        refresh_touched(config, err=output == "json")
    click.get_current_context().exit(1 if summary.refused else 0)


def _stored(batch):
    """batch() run until the store takes it: when the store stops answering (a restart), the
    messages not yet moved stay in the folder, and the batch runs again once it answers, in
    this process (a watcher never exits for the store's sake)."""
    from cli.session import first_line, reconnect, unreachable_errors
    from store import db
    while True:
        try:
            return batch()
        except unreachable_errors() as exc:
            echo_err(f"rua fetch: the store does not answer ({first_line(exc)}); the messages "
                     "not yet filed are read again once it does")
            reconnect(db)


def _watch(config, org, output: str):
    from cli.snapshot import refresh_touched
    from intake import imap

    def once(client, mailbox):
        summary = _locked(config, output, lambda handle: imap.drain(
            client, mailbox, config, handle, org=org), quiet_when_empty=True)
        if summary is None:
            echo_err("rua fetch: another fetch is running; waiting for the next change")
        elif summary.stored:
            refresh_touched(config, err=True)

    def batch(client, mailbox):
        _stored(lambda: once(client, mailbox))

    try:
        imap.watch(config, batch, lambda message: echo_err(f"rua fetch: {message}"))
    except IntakeError as exc:
        fail(str(exc))
