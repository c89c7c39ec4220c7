"""The job table: every package's job with its trigger, and the refresh that follows a job."""
import pytest

from config import Config
from jobs.table import JOBS, job_table, then_refresh
from store import events
from store.clock import utcnow
from store.job_runs import JobFailed
from store.models import Organization
from tests.factories import make_org


def test_a_job_that_needs_a_setting_runs_only_once_one_is_set():
    unset = [name for name, _, _ in job_table(Config())]
    assert unset == [job.name for job in JOBS if not job.needs]
    every = Config(maildir="/srv/mail", imap_url="imaps://u:p@mail.example", retention_days=30)
    assert [name for name, _, _ in job_table(every)] == [job.name for job in JOBS]
    assert [name for name, _, _ in job_table(Config(retention_days=30))] == [
        job.name for job in JOBS if job.needs != ("imap_url", "maildir")]


def test_every_job_has_a_trigger_apscheduler_takes_and_a_cron_schedule():
    from apscheduler.schedulers.background import BackgroundScheduler
    scheduler = BackgroundScheduler(timezone="UTC")
    for job in JOBS:
        scheduler.add_job(print, id=job.name, **job.trigger(Config()))
        assert len(job.cron.split()) == 5, job.name
    assert [job.id for job in scheduler.get_jobs()] == [job.name for job in JOBS]


def test_a_job_that_ran_refreshes_the_organizations_it_marked(database, config):
    org = make_org()
    events.mark_dirty(org.id)
    assert then_refresh(lambda now, config: 0)(utcnow(), config) == 0
    assert Organization.get_by_id(org.id).dirty_since is None


def test_a_skipped_job_refreshes_nothing(database, config):
    org = make_org()
    events.mark_dirty(org.id)
    assert then_refresh(lambda now, config: None)(utcnow(), config) is None
    assert Organization.get_by_id(org.id).dirty_since is not None


def test_a_failed_job_still_refreshes_what_it_did_then_raises(database, config):
    org = make_org()

    def stored_then_failed(now, config):
        events.mark_dirty(org.id)
        raise JobFailed("the IMAP login was refused")
    with pytest.raises(JobFailed):
        then_refresh(stored_then_failed)(utcnow(), config)
    assert Organization.get_by_id(org.id).dirty_since is None
