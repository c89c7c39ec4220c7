"""The scheduler's fetch job: the configured IMAP mailbox and Maildir read once each."""
from __future__ import annotations

import logging

from ingest.printable import printable
from intake import MAILBOX_LOCK, expiry, imap, imap_login, maildir
from intake.mailbox_url import IntakeError
from store import locks
from store.clock import utcnow
from store.job_runs import JobFailed

log = logging.getLogger("rua.fetch")


def scheduled(now, config) -> int | None:
    """The fetch job: the configured mailboxes read once; the reports newly stored. None (read
    nothing) when another fetch is reading them: a watcher, or `rua fetch`, is on it. The
    mailbox lock is let go before the job's refresh, so a watcher waits only for the reading."""
    with locks.exclusive(MAILBOX_LOCK, config.lock_dir) as held:
        if not held:
            log.info("fetch skipped: another fetch (a watcher, `rua fetch`) is reading the "
                     "mailboxes")
            return None
        return fetch_configured(config)


def fetch_configured(config) -> int:
    """Ingest what waits in RUA_IMAP_URL's folder and RUA_MAILDIR; the reports newly stored.
    A mailbox that cannot be used does not stop the other one from being read, then fails the
    job (JobFailed, saying why of each)."""
    stored = [0]
    failures = []

    def handle(result):
        stored[0] += sum(r["status"] == "stored" for r in result.reports)
        if result.status == "refused":
            log.warning("refused %s", printable(result.error))

    if config.imap_url:
        client = None
        try:
            mailbox = imap.parse_url(config.imap_url)
            login = imap_login.for_config(config, mailbox)
            _warn_of_expiry(login)
            client = imap.connect(config, mailbox, login)
            count = imap.drain(client, mailbox, config, handle)
            log.info("fetched %d message(s) from %s", count, mailbox.where)
        except (IntakeError, *imap.DROPPED) as exc:
            failures.append(f"IMAP fetch failed: {imap.one_line(exc)}")
        finally:
            imap.close(client)
    if config.maildir:
        try:
            count = maildir.drain(config.maildir, config, handle)
            log.info("fetched %d message(s) from %s", count, config.maildir)
        except (IntakeError, OSError) as exc:
            failures.append(f"Maildir fetch failed: {exc}")
    if failures:
        raise JobFailed("; ".join(failures))
    return stored[0]


def _warn_of_expiry(login) -> None:
    """Each fetch in the last WARN_AHEAD of the login's certificate says so, as a warning."""
    said = expiry.warning(login, utcnow())
    if said:
        log.warning("%s", said)
