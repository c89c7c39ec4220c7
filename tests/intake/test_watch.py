"""`rua fetch imap --watch` leaves no mail waiting for the next change: mail the store did not
take is read again once it does, mail that came while a batch read is read right after it, and
a watcher that found the mailbox busy takes over within seconds of the other fetch's end."""
from __future__ import annotations

import contextlib
import os
import signal

from intake import MAILBOX_LOCK
from store.models import Report
from tests.held_lock import held_elsewhere
from tests.intake.conftest import locked_store, report_mail, watching

def stored_ids() -> list[str]:
    return sorted(r.report_id for r in Report.select(Report.report_id))


def test_mail_the_store_did_not_take_is_read_again_once_it_does_without_new_mail(
        acme, box, config, imap_server):
    box.append(report_mail("r-1"))
    with contextlib.ExitStack() as lock:
        url = lock.enter_context(locked_store(config))
        with watching(config.replace(database_url=url), box.settings) as (out, err):
            assert err.wait_for("the store did not take 1 message(s)"), (out.lines, err.lines)
            lock.close()                            # the store takes writes again
            assert out.wait_for("1 report stored", timeout=10), (out.lines, err.lines)
    assert stored_ids() == ["r-1"] and box.subjects(box.done) == ["Report r-1"]


def test_mail_that_came_while_a_batch_read_is_read_right_after_it(acme, box, config,
                                                                  imap_server):
    box.append(*(report_mail(f"early-{n:02}") for n in range(30)))
    with watching(config, box.settings) as (out, err):
        assert out.wait_for(";UID=1 "), (out.lines, err.lines)      # the batch is reading
        box.append(report_mail("late"))                            # after its search
        assert out.wait_for("30 files: 30 reports stored"), (out.lines, err.lines)
        assert out.wait_for("1 file: 1 report stored", timeout=10), (out.lines, err.lines)
    assert len(stored_ids()) == 31 and "late" in stored_ids()


def test_a_watcher_takes_over_within_seconds_when_the_fetch_reading_the_mailbox_dies(
        acme, box, config, imap_server):
    with held_elsewhere(config, MAILBOX_LOCK) as reader:
        box.append(report_mail("r-1"))
        with watching(config, box.settings) as (out, err):
            assert err.wait_for("another fetch is reading the mailbox"), (out.lines, err.lines)
            os.kill(reader.pid, signal.SIGKILL)         # no change in the mailbox follows
            assert out.wait_for("1 report stored", timeout=10), (out.lines, err.lines)
    assert stored_ids() == ["r-1"]
