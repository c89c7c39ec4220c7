"""Refreshing many organizations: in parallel processes, each under its lock, none lost."""
import pytest

from snapshotter import refreshes
from store import events, locks, snapshots
from store.models import Organization
from tests.factories import make_org
from tests.snapshotter.reports import NOW, TODAY, report_on


def changed_orgs(count):
    orgs = [make_org() for _ in range(count)]
    for org in orgs:
        report_on(org, "example.com", TODAY, [{"count": 3}])
    return orgs


def dirty(org):
    return Organization.get_by_id(org.id).dirty_since is not None


def test_dirty_organizations_refreshed_in_parallel_processes_are_left_clean(database, config):
    orgs = changed_orgs(3)
    refreshed = refreshes.refresh_dirty(NOW, config, processes=2)
    assert sorted(r.org_id for r in refreshed) == sorted(o.id for o in orgs)
    for org in orgs:
        assert not dirty(org)
        assert snapshots.get(org.id, "overview").computed_at == NOW
        assert snapshots.get(org.id, "health", "example.com") is not None


def test_an_organization_another_refresh_holds_is_left_dirty_for_the_next_run(database, config):
    held, free = changed_orgs(2)
    with locks.exclusive(f"snapshots.{held.id}", config.lock_dir):
        assert [r.org_id for r in refreshes.refresh_dirty(NOW, config)] == [free.id]
    assert dirty(held) and not dirty(free)
    assert snapshots.get(held.id, "overview") is None
    assert [r.org_id for r in refreshes.refresh_dirty(NOW, config)] == [held.id]


def test_the_dirty_job_leaves_an_organization_being_refreshed_to_that_refresh(database,
                                                                               config):
    [org] = changed_orgs(1)
    with locks.exclusive(f"snapshots.{org.id}", config.lock_dir):
        events.take_dirty(org.id)                  # another refresh is under way
        assert refreshes.refresh_dirty(NOW, config) == []
        events.settle_dirty(org.id)                # and ends, nothing marked meanwhile
    assert not dirty(org)


def test_an_organization_whose_refresh_died_is_refreshed_by_the_next_run(database, config):
    [org] = changed_orgs(1)
    events.take_dirty(org.id)                      # then the process was killed
    assert [r.org_id for r in refreshes.refresh_dirty(NOW, config)] == [org.id]
    assert not dirty(org)
    assert snapshots.get(org.id, "overview").computed_at == NOW


def test_the_health_job_marks_an_organization_it_finds_held_for_the_next_run(database, config):
    [org] = changed_orgs(1)
    refreshes.refresh_dirty(NOW, config)
    with locks.exclusive(f"snapshots.{org.id}", config.lock_dir):
        assert refreshes.refresh_health(NOW, config) == []
    assert dirty(org)


@pytest.mark.parametrize("processes", [1, 2])
def test_one_organization_failing_leaves_the_others_refreshed_then_is_raised(database, config,
                                                                            processes):
    orgs = changed_orgs(2)
    with pytest.raises(LookupError):
        refreshes.refresh_many([orgs[0].id, "01NOSUCHORGANIZATION0000000", orgs[1].id], NOW,
                               config, processes=processes)
    assert not dirty(orgs[0]) and not dirty(orgs[1])
