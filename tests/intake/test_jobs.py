"""The scheduler's fetch job: every configured mailbox read under the mailbox lock, then a
refresh."""
from __future__ import annotations

import os

import pytest

from config import Config
from intake import MAILBOX_LOCK
from store import job_runs, locks
from jobs.scheduler import run_exclusive
from jobs.table import job_table
from store.job_runs import JobFailed
from store.models import Organization, Report
from tests.intake.conftest import make_maildir, report_mail
from webapp import create_app


def test_there_is_no_fetch_job_without_a_mailbox():
    assert "fetch" not in [name for name, _, _ in job_table(Config())]


def test_the_fetch_job_runs_every_fetch_interval_minutes_once_a_mailbox_is_set():
    config = Config(maildir="/srv/mail/dmarc", fetch_interval=15)
    [trigger] = [trigger for name, _, trigger in job_table(config) if name == "fetch"]
    assert trigger["trigger"] == "interval" and trigger["minutes"] == 15


def test_the_job_reads_both_mailboxes_under_the_mailbox_lock_then_refreshes(acme, box, config,
                                                                             tmp_path, caplog):
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("from-maildir"))
    box.append(report_mail("from-imap"))
    config = Config.from_env(os.environ).replace(
        database_url=config.database_url, lock_dir=config.lock_dir, offline=True,
        maildir=str(maildir))
    [job] = [job for name, job, _ in job_table(config) if name == "fetch"]
    caplog.set_level("INFO", logger="rua.fetch")
    with locks.exclusive(MAILBOX_LOCK, config.lock_dir) as held:
        assert held and run_exclusive("fetch", job, config) is True    # `rua fetch` is on it
    assert Report.select().count() == 0
    assert "fetch skipped: another fetch" in caplog.text     # not "nothing to fetch"
    assert run_exclusive("fetch", job, config) is True
    assert sorted(r.report_id for r in Report.select()) == ["from-imap", "from-maildir"]
    assert Organization.get().dirty_since is None
    assert box.subjects(box.done) == ["Report from-imap"]
    assert os.listdir(maildir / "cur") == ["1.a.host:2,S"]


def test_a_refused_login_fails_the_job_in_readyz_and_metrics_after_the_maildir_is_read(
        acme, box, config, tmp_path, caplog):
    (tmp_path / "wrong").write_text("not-the-password-9f2c")
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("from-maildir"))
    config = Config.from_env(os.environ).replace(
        database_url=config.database_url, lock_dir=config.lock_dir, offline=True,
        maildir=str(maildir), imap_password_file=str(tmp_path / "wrong"))
    [job] = [job for name, job, _ in job_table(config) if name == "fetch"]
    with pytest.raises(JobFailed, match=r"^IMAP fetch failed: IMAP login as dmarc at \S+ refused"):
        run_exclusive("fetch", job, config)
    assert [r.report_id for r in Report.select()] == ["from-maildir"]
    assert Organization.get().dirty_since is None      # what was read shows all the same
    [failed] = [r for r in caplog.records if r.name == "rua.scheduler"]
    assert (failed.levelname, failed.outcome) == ("ERROR", "failed")
    assert failed.reason.startswith("IMAP fetch failed: IMAP login as dmarc")
    assert failed.getMessage().startswith("job fetch failed in ")
    assert "not-the-password-9f2c" not in caplog.text
    client = create_app(config.replace(metrics=True)).test_client()
    [run] = client.get("/readyz").get_json()["scheduler"]["jobs"]
    metrics = client.get("/metrics").get_data(as_text=True)
    assert (run["name"], run["ok"], run["runs"], run["failures"]) == ("fetch", False, 1, 1)
    assert 'rua_job_last_success{job="fetch"} 0.0' in metrics
    assert 'rua_job_failures_total{job="fetch"} 1.0' in metrics


def test_the_job_succeeds_again_once_the_login_is_accepted(acme, box, config, tmp_path):
    (tmp_path / "wrong").write_text("not-the-password")
    config = Config.from_env(os.environ).replace(
        database_url=config.database_url, lock_dir=config.lock_dir, offline=True)
    [job] = [job for name, job, _ in job_table(config.replace(
        imap_password_file=str(tmp_path / "wrong"))) if name == "fetch"]
    with pytest.raises(JobFailed):
        run_exclusive("fetch", job, config)
    [job] = [job for name, job, _ in job_table(config) if name == "fetch"]
    assert run_exclusive("fetch", job, config) is True
    [run] = job_runs.last_runs()
    assert (run.ok, run.runs, run.failures) == (True, 2, 1)
