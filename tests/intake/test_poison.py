"""No message is read forever, in a real Maildir and in Dovecot: one whose reading did not
finish twice (the process was killed) is refused unread on the third, one that met an error rua
cannot classify is refused with it on the second; one the store failed to take (locked) is kept
and that reading not counted. The good messages beside them are stored."""
from __future__ import annotations

import json
import os
import signal
import sqlite3

import pytest
from peewee import OperationalError

from intake import imap
from intake.mailbox_url import parse_url
from intake.outcome import KEEP, REFUSED
from intake.poison import POISON_AFTER, message_key, read_once, refused_unread
from store import intake_attempts, is_postgres
from store.clock import utcnow
from store.models import IntakeAttempt, Report, TlsReport
from tests.ingest import tlsbuild
from tests.intake.conftest import locked_store, make_maildir, report_mail, subject
from tests.intake.killer import killing_mail, run_killed

REFUSAL = ("its reading failed 2 times, the last time without finishing (the process died or was "
           "killed while reading it)")


def stored_ids() -> list[str]:
    return sorted(r.report_id for r in Report.select(Report.report_id))


def test_the_rule_and_its_record(database):
    key = message_key("maildir:/srv/mail", "1.a.host")
    assert key != message_key("maildir:/srv/mail", "2.a.host") and len(key) == 64
    assert intake_attempts.failed(key) == 0
    intake_attempts.begin(key, utcnow())
    intake_attempts.begin(key, utcnow())
    intake_attempts.begin(key, utcnow())
    intake_attempts.take_back(key)
    assert intake_attempts.failed(key) == POISON_AFTER == 2
    intake_attempts.take_back(key)
    intake_attempts.take_back(key)
    assert IntakeAttempt.select().count() == 0
    intake_attempts.begin(key, utcnow())
    intake_attempts.finish(key)
    assert IntakeAttempt.select().count() == 0
    result = refused_unread("new/1.a.host", 2)
    assert (result.status, result.error) == ("refused", f"new/1.a.host: {REFUSAL}; refused unread")


def test_an_error_escaping_the_reading_counts_and_the_stores_is_raised_uncounted(database):
    key = message_key("maildir:/srv/mail", "1.a.host")

    def unexpected():
        return {}["policies"]

    def locked():
        raise OperationalError(sqlite3.OperationalError("database is locked"), "database is locked")

    first = read_once(key, "new/1.a.host", unexpected)
    assert first.goes == KEEP and intake_attempts.failed(key) == 1
    assert first.result.error.startswith("new/1.a.host: unexpected error (KeyError: 'policies')")
    with pytest.raises(OperationalError):
        read_once(key, "new/1.a.host", locked)
    assert intake_attempts.failed(key) == 1
    second = read_once(key, "new/1.a.host", unexpected)
    assert second.goes == REFUSED and IntakeAttempt.select().count() == 0
    assert second.result.error == "new/1.a.host: unexpected error (KeyError: 'policies')"


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


UNCLASSIFIED = "tls-unclassified"


@pytest.fixture
def unclassifiable(database):
    """The store refuses one TLS report with an error of its own making: a trigger raising on
    report id UNCLASSIFIED (SQLite: a constraint error; Postgres: SQLSTATE P0001), which rua
    cannot tell apart from a bug of its own. Every input rua knows to be bad it refuses with a
    reason; this stands for the one it does not know yet."""
    table = TlsReport._meta.table_name
    if is_postgres():
        database.execute_sql(
            "CREATE FUNCTION refuse_unclassified() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'no such luck'; END $$")
        database.execute_sql(
            f'CREATE TRIGGER refuse_unclassified BEFORE INSERT ON "{table}" FOR EACH ROW '
            f"WHEN (NEW.report_id = '{UNCLASSIFIED}') EXECUTE FUNCTION refuse_unclassified()")
        yield
        database.execute_sql(f'DROP TRIGGER IF EXISTS refuse_unclassified ON "{table}"')
        database.execute_sql("DROP FUNCTION IF EXISTS refuse_unclassified()")
        return
    database.execute_sql(
        f'CREATE TRIGGER refuse_unclassified BEFORE INSERT ON "{table}" '
        f"WHEN NEW.report_id = '{UNCLASSIFIED}' BEGIN SELECT RAISE(ABORT, 'no such luck'); END")
    yield
    database.execute_sql("DROP TRIGGER IF EXISTS refuse_unclassified")


def unclassified_mail() -> bytes:
    """A TLS report the store refuses with an error rua cannot classify (see unclassifiable)."""
    document = tlsbuild.report([tlsbuild.policy(successful=10)], report_id=UNCLASSIFIED)
    return subject(tlsbuild.mail(tlsbuild.gzipped(json.dumps(document).encode())), "Unclassified")


def test_a_maildir_message_failing_unexpectedly_is_refused_with_its_reason_on_the_second_reading(
        rua, acme, unclassifiable, tmp_path):
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("r-1"))
    (maildir / "new" / "2.a.host").write_bytes(unclassified_mail())
    first = rua("fetch", "maildir", maildir)
    assert first.exit_code == 1, first.stderr
    failed = f"refused    {maildir / 'new' / '2.a.host'} » r.json.gz: unexpected error ("
    assert failed in first.stdout
    assert "; the message is kept and read again, and refused once 2 readings have failed" \
        in first.stdout
    assert os.listdir(maildir / "new") == ["2.a.host"]
    assert IntakeAttempt.get().attempts == 1
    second = rua("fetch", "maildir", maildir)
    assert second.exit_code == 1, second.stderr
    [line] = second.stdout.splitlines()[:1]
    assert line.startswith(failed) and "kept" not in line
    assert sorted(os.listdir(maildir / "cur")) == ["1.a.host:2,S", "2.a.host:2,FS"]
    assert stored_ids() == ["r-1"] and IntakeAttempt.select().count() == 0
    assert rua("fetch", "maildir", maildir).stdout.startswith("0 files")


def test_an_imap_message_failing_unexpectedly_is_refused_with_its_reason_on_the_second_reading(
        rua, acme, unclassifiable, box):
    box.append(report_mail("r-1"), unclassified_mail())
    first = rua("fetch", "imap")
    assert first.exit_code == 1, first.stderr
    failed = f"refused    {box.inbox};UID=2 » r.json.gz: unexpected error ("
    assert failed in first.stdout and "kept and read again" in first.stdout
    assert box.subjects(box.inbox) == ["Unclassified"] and box.subjects(box.refused) == []
    second = rua("fetch", "imap")
    assert second.exit_code == 1, second.stderr
    assert second.stdout.startswith(failed) and "kept" not in second.stdout.splitlines()[0]
    assert box.subjects(box.refused) == ["Unclassified"] and box.subjects(box.inbox) == []
    assert box.subjects(box.done) == ["Report r-1"]
    assert stored_ids() == ["r-1"] and IntakeAttempt.select().count() == 0


@pytest.mark.slow      # SQLite: waits out its busy timeout twice
def test_a_store_failure_keeps_a_maildir_message_and_does_not_count(rua, acme, config, tmp_path):
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("r-1"))
    key = message_key(f"maildir:{os.path.realpath(maildir)}", "1.a.host")
    intake_attempts.begin(key, utcnow())        # one reading failed already (the process died)
    with locked_store(config) as url:
        locked = rua("fetch", "maildir", maildir, url=url)
    assert locked.exit_code == 1, locked.stderr
    # SQLite: the report's own write meets the lock; Postgres: its group's commit, for the
    # message as a whole.
    report = "» receiver.example!example.com!1700000000!1700086399!r-1.xml.gz"
    assert any(f"{origin}: the store failed (OperationalError: " in locked.stdout
               for origin in (report, "/new/1.a.host"))
    assert "; the message is kept and read again next time" in locked.stdout
    assert os.listdir(maildir / "new") == ["1.a.host"]
    assert intake_attempts.failed(key) == POISON_AFTER - 1
    again = rua("fetch", "maildir", maildir)
    assert again.exit_code == 0, again.stdout
    assert os.listdir(maildir / "cur") == ["1.a.host:2,S"] and stored_ids() == ["r-1"]


@pytest.mark.slow
def test_a_store_failure_keeps_an_imap_message_and_does_not_count(rua, acme, config, box):
    box.append(report_mail("r-1"))
    mailbox = parse_url(box.settings["RUA_IMAP_URL"])
    with box.client() as client:
        validity = client.select_folder(box.inbox, readonly=True)[b"UIDVALIDITY"]
    key = message_key(imap.folder_key(mailbox, validity), "1")
    intake_attempts.begin(key, utcnow())        # one reading failed already (the process died)
    with locked_store(config) as url:
        locked = rua("fetch", "imap", url=url)
    assert locked.exit_code == 1, locked.stderr
    assert "the store failed (OperationalError: " in locked.stdout
    assert box.subjects(box.inbox) == ["Report r-1"] and box.subjects(box.refused) == []
    assert intake_attempts.failed(key) == POISON_AFTER - 1
    again = rua("fetch", "imap")
    assert again.exit_code == 0, again.stdout
    assert box.subjects(box.done) == ["Report r-1"] and stored_ids() == ["r-1"]
