"""The job table: every package's job with its trigger, and the refresh that follows a job."""
import pytest

from config import Config
from jobs.table import job_table, then_refresh
from store import events
from store.clock import utcnow
from store.job_runs import JobFailed
from store.models import Organization
from tests.factories import make_org

NAMES = ["dirty", "health", "dns", "sources", "notify", "hour", "daily", "fetch"]


def test_the_table_names_every_job_rua_scheduler_once_takes():
    assert [name for name, _, _ in job_table(Config(maildir="/srv/mail"))] == NAMES
    assert [name for name, _, _ in job_table(Config())] == NAMES[:-1]


def test_a_job_that_ran_refreshes_the_organizations_it_marked(database):
    org = make_org()
    events.mark_dirty(org.id)
    assert then_refresh(lambda now, config: 0)(utcnow(), Config()) == 0
    assert Organization.get_by_id(org.id).dirty_since is None


def test_a_skipped_job_refreshes_nothing(database):
    org = make_org()
    events.mark_dirty(org.id)
    assert then_refresh(lambda now, config: None)(utcnow(), Config()) is None
    assert Organization.get_by_id(org.id).dirty_since is not None


def test_a_failed_job_still_refreshes_what_it_did_then_raises(database):
    org = make_org()

    def stored_then_failed(now, config):
        events.mark_dirty(org.id)
        raise JobFailed("the IMAP login was refused")
    with pytest.raises(JobFailed):
        then_refresh(stored_then_failed)(utcnow(), Config())
    assert Organization.get_by_id(org.id).dirty_since is None
