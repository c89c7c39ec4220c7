"""Hostile messages beside good ones, in a real Maildir and in Dovecot: each is refused by its
budget and filed as refused, and the good reports around them are stored."""
from __future__ import annotations

import os

from store.models import Report
from tests.ingest import hostile_mail
from tests.intake.conftest import make_maildir, report_mail, subject

MB = 1 << 20
REASONS = {
    "semicolons": "a header block longer than 65536 bytes; the rest of it is not read",
    "empty parts": "more than 1000 MIME parts (RUA_MAX_MEMBERS); the rest of it is not read",
    "nested": "MIME parts nested more than 4 levels deep (RUA_MAX_ARCHIVE_DEPTH); the rest of "
              "it is not read",
}


def stored_ids() -> list[str]:
    return sorted(r.report_id for r in Report.select(Report.report_id))


def test_hostile_messages_in_a_maildir_are_refused_and_the_good_ones_stored(rua, acme, tmp_path):
    maildir = make_maildir(tmp_path / "Maildir")
    messages = {"1.a.host": report_mail("r-1"), "2.a.host": hostile_mail.semicolons(),
                "3.a.host": hostile_mail.empty_parts(66_000_000),
                "4.a.host": hostile_mail.nested(100_000), "5.a.host": report_mail("r-5")}
    for name, message in messages.items():
        (maildir / "new" / name).write_bytes(message)
    result = rua("fetch", "maildir", maildir)
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    for line, name, reason in zip(lines[1:4], ("2.a.host", "3.a.host", "4.a.host"),
                                  REASONS.values()):
        assert line == f"refused    {maildir / 'new' / name}: {reason}"
    assert sorted(os.listdir(maildir / "cur")) == [
        "1.a.host:2,S", "2.a.host:2,FS", "3.a.host:2,FS", "4.a.host:2,FS", "5.a.host:2,S"]
    assert stored_ids() == ["r-1", "r-5"]


def test_hostile_messages_in_dovecot_are_refused_and_the_good_ones_stored(rua, acme, box):
    box.append(report_mail("r-1"), subject(hostile_mail.semicolons(), "semicolons"),
               subject(hostile_mail.empty_parts(4 * MB), "empty parts"),
               subject(hostile_mail.nested(100_000), "nested"), report_mail("r-5"))
    result = rua("fetch", "imap")
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    for line, uid, reason in zip(lines[1:4], (2, 3, 4), REASONS.values()):
        assert line == f"refused    {box.inbox};UID={uid}: {reason}"
    assert box.subjects(box.refused) == sorted(REASONS)
    assert box.subjects(box.done) == ["Report r-1", "Report r-5"]
    assert stored_ids() == ["r-1", "r-5"]


def test_a_message_past_its_time_budget_is_filed_as_refused(rua, acme, tmp_path, monkeypatch):
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("r-1"))
    monkeypatch.setenv("RUA_MAX_MESSAGE_SECONDS", "0")     # spent before the first report
    result = rua("fetch", "maildir", maildir)
    assert result.exit_code == 1, result.stderr
    assert result.stdout.splitlines()[0] == (
        f"refused    {maildir / 'new' / '1.a.host'}: its 0-second budget is spent "
        "(RUA_MAX_MESSAGE_SECONDS); the rest of it is not read")
    assert os.listdir(maildir / "cur") == ["1.a.host:2,FS"] and stored_ids() == []
