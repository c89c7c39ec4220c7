"""A message whose reading did not finish twice (the process was killed) is refused unread on
the third, in a real Maildir and in Dovecot, and the good messages beside it are stored."""
from __future__ import annotations

import os
import signal

from intake.poison import POISON_AFTER, message_key, refused_unread
from store import intake_attempts
from store.clock import utcnow
from store.models import IntakeAttempt, Report
from tests.intake.conftest import make_maildir, report_mail, subject
from tests.intake.killer import killing_mail, run_killed

REFUSAL = "its reading did not finish 2 times (the process died or was killed while reading it)"


def stored_ids() -> list[str]:
    return sorted(r.report_id for r in Report.select(Report.report_id))


def test_the_rule_and_its_record(database):
    key = message_key("maildir:/srv/mail", "1.a.host")
    assert key != message_key("maildir:/srv/mail", "2.a.host") and len(key) == 64
    assert intake_attempts.unfinished(key) == 0
    intake_attempts.begin(key, utcnow())
    intake_attempts.begin(key, utcnow())
    assert intake_attempts.unfinished(key) == POISON_AFTER == 2
    intake_attempts.finish(key)
    assert IntakeAttempt.select().count() == 0
    result = refused_unread("new/1.a.host", 2)
    assert (result.status, result.error) == ("refused", f"new/1.a.host: {REFUSAL}; refused unread")


def test_a_maildir_message_that_kills_the_process_is_refused_on_the_third_reading(
        rua, acme, config, tmp_path):
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("r-1"))
    (maildir / "new" / "2.a.host").write_bytes(killing_mail())
    (maildir / "new" / "3.a.host").write_bytes(report_mail("r-3"))
    for _ in range(2):
        killed = run_killed(config, "fetch", "maildir", maildir)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert sorted(os.listdir(maildir / "new")) == ["2.a.host", "3.a.host"]
    third = rua("fetch", "maildir", maildir)
    assert third.exit_code == 1, third.stderr
    assert f"refused    {maildir / 'new' / '2.a.host'}: {REFUSAL}; refused unread" in third.stdout
    assert sorted(os.listdir(maildir / "cur")) == ["1.a.host:2,S", "2.a.host:2,FS", "3.a.host:2,S"]
    assert stored_ids() == ["r-1", "r-3"]
    assert IntakeAttempt.select().count() == 0


def test_an_imap_message_that_kills_the_process_is_refused_on_the_third_reading(
        rua, acme, config, box):
    box.append(report_mail("r-1"), subject(killing_mail(), "Killer"), report_mail("r-3"))
    for _ in range(2):
        killed = run_killed(config, "fetch", "imap")
        assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert box.subjects(box.refused) == []
    third = rua("fetch", "imap")
    assert third.exit_code == 1, third.stderr
    assert f"refused    {box.inbox};UID=2: {REFUSAL}; refused unread" in third.stdout
    assert box.subjects(box.refused) == ["Killer"]
    assert box.subjects(box.done) == ["Report r-1", "Report r-3"]
    assert stored_ids() == ["r-1", "r-3"] and box.subjects(box.inbox) == []
