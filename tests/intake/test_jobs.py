"""The scheduler's fetch job: every configured mailbox read under the job lock, then a refresh."""
from __future__ import annotations

import os

from config import Config
from store import locks
from jobs.scheduler import run_exclusive
from jobs.table import fetch_jobs, job_table
from store.models import Organization, Report
from tests.intake.conftest import make_maildir, report_mail


def test_there_is_no_fetch_job_without_a_mailbox():
    assert fetch_jobs(Config()) == ()
    assert "fetch" not in [name for name, _, _ in job_table(Config())]


def test_the_fetch_job_runs_every_fetch_interval_minutes_once_a_mailbox_is_set():
    [(name, _, trigger)] = fetch_jobs(Config(maildir="/srv/mail/dmarc", fetch_interval=15))
    assert name == "fetch" and trigger["trigger"] == "interval" and trigger["minutes"] == 15


def test_the_job_reads_both_mailboxes_under_its_lock_then_refreshes(acme, box, config, tmp_path):
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("from-maildir"))
    box.append(report_mail("from-imap"))
    config = Config.from_env(os.environ).replace(
        database_url=config.database_url, lock_dir=config.lock_dir, offline=True,
        maildir=str(maildir))
    [job] = [job for name, job, _ in job_table(config) if name == "fetch"]
    with locks.exclusive("job.fetch", config.lock_dir) as held:
        assert held and run_exclusive("fetch", job, config) is False   # `rua fetch` is on it
    assert Report.select().count() == 0
    assert run_exclusive("fetch", job, config) is True
    assert sorted(r.report_id for r in Report.select()) == ["from-imap", "from-maildir"]
    assert Organization.get().dirty_since is None
    assert box.subjects(box.done) == ["Report from-imap"]
    assert os.listdir(maildir / "cur") == ["1.a.host:2,S"]


def test_a_mailbox_that_cannot_be_used_is_logged_and_the_other_still_read(
        acme, box, config, tmp_path, caplog):
    (tmp_path / "wrong").write_text("nope")
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("from-maildir"))
    config = Config.from_env(os.environ).replace(
        database_url=config.database_url, lock_dir=config.lock_dir, offline=True,
        maildir=str(maildir), imap_password_file=str(tmp_path / "wrong"))
    [job] = [job for name, job, _ in job_table(config) if name == "fetch"]
    assert run_exclusive("fetch", job, config) is True
    assert [r.report_id for r in Report.select()] == ["from-maildir"]
    assert any("IMAP fetch failed: IMAP login as dmarc" in r.getMessage() for r in caplog.records)
