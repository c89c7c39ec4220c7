"""`rua fetch`: ingest the report mail waiting in a mailbox (IMAP or Maildir) and file it."""
from __future__ import annotations

import time

import click

from cli.common import echo_err, fail
from cli.ingest_display import Display, Summary
from cli.lookup import resolve_org
from cli.options import OneOf
from cli.session import open_store
from intake import MAILBOX_LOCK
from intake.mailbox_url import IntakeError
from store import locks

# A watcher that finds the mailbox being read by another fetch tries again this often: it
# takes over within seconds when that one is done or dies (the lock goes with its session).
BUSY_RETRY_SECONDS = 2
# Mail the store did not take (down, restarting, a table locked) is read again after 1 s,
# then after twice the last wait, at most this many seconds, until the store takes it.
KEPT_RETRY_SECONDS = 30
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
    if watch:
        with open_store(config):
            org = resolve_org(org_ref) if org_ref else None
        _watch(config, org, output)         # each batch in a connection of its own
        return
    with open_store(config):
        org = resolve_org(org_ref) if org_ref else None
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
    """One batch under the mailbox lock, shown as `rua ingest` shows files; None when busy."""
    with locks.exclusive(MAILBOX_LOCK, config.lock_dir) as held:
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
    """batch() in a connection of its own, run until the store takes it: when the store stops
    answering (a restart), the messages not yet moved stay in the folder, and the batch runs
    again once it answers, in this process (a watcher never exits for the store's sake)."""
    from cli.session import first_line, unreachable_errors, wait_for_store
    from store import db
    while True:
        try:
            with db.connection_context():
                return batch()
        except unreachable_errors() as exc:
            echo_err(f"rua fetch: the store does not answer ({first_line(exc)}); the messages "
                     "not yet filed are read again once it does")
            wait_for_store(db)


class Batches:
    """The watcher's batches; each says how soon the next must run without a change (seconds,
    None: at the next change). Mail that came while a batch read is told of in the answers to
    its own commands, which IDLE does not repeat: a batch that handled mail runs again at once."""

    def __init__(self, config, org, output: str):
        self.config, self.org, self.output = config, org, output
        self.kept_wait = 0          # seconds until kept mail is read again; 0: none kept
        self.busy = False           # the last batch found another fetch reading the mailbox

    def __call__(self, client, mailbox) -> float | None:
        return _stored(lambda: self.once(client, mailbox))

    def once(self, client, mailbox) -> float | None:
        from cli.snapshot import refresh_touched
        from intake import imap
        summary = _locked(self.config, self.output, lambda handle: imap.drain(
            client, mailbox, self.config, handle, org=self.org), quiet_when_empty=True)
        if summary is None:
            if not self.busy:
                echo_err("rua fetch: another fetch is reading the mailbox; trying again every "
                         f"{BUSY_RETRY_SECONDS} s until it is done")
            self.busy = True
            return BUSY_RETRY_SECONDS
        self.busy = False
        if summary.stored:
            refresh_touched(self.config, err=True)
        if summary.kept:
            self.kept_wait = min(max(self.kept_wait * 2, 1), KEPT_RETRY_SECONDS)
            echo_err(f"rua fetch: the store did not take {summary.kept} message(s); reading "
                     f"them again in {self.kept_wait} s")
            return self.kept_wait
        self.kept_wait = 0
        return 0 if summary.files else None


def _watch(config, org, output: str):
    from intake import imap
    try:
        imap.watch(config, Batches(config, org, output),
                   lambda message: echo_err(f"rua fetch: {message}"))
    except IntakeError as exc:
        fail(str(exc))
