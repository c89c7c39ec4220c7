"""Locks across runners: one holder per job lock, N slots per group, released on exit."""
import threading

from snapshotter import locks
from snapshotter.scheduler import build, run_exclusive
from store import db


def test_a_held_lock_is_refused_to_a_second_holder_and_free_again_after(config, database):
    with locks.exclusive("job.x", config.lock_dir) as first:
        seen = []
        other = threading.Thread(target=lambda: _try(config, "job.x", seen))
        other.start()
        other.join()
        assert first is True and seen == [False]
    again = []
    _try(config, "job.x", again)
    assert again == [True]


def _try(config, name, seen):
    with db.connection_context():
        with locks.exclusive(name, config.lock_dir) as held:
            seen.append(held)


def test_slots_hand_out_capacity_holders_then_none(config, database):
    taken, release, results = threading.Barrier(4), threading.Event(), []

    def holder():
        with db.connection_context():
            with locks.slot("overview.org1", 3, config.lock_dir) as number:
                results.append(number)
                taken.wait(timeout=10)
                release.wait(timeout=10)

    threads = [threading.Thread(target=holder) for _ in range(3)]
    for t in threads:
        t.start()
    taken.wait(timeout=10)
    with locks.slot("overview.org1", 3, config.lock_dir) as number:
        assert number is None
    with locks.slot("overview.org2", 3, config.lock_dir) as number:
        assert number == 0
    release.set()
    for t in threads:
        t.join()
    assert sorted(results) == [0, 1, 2]


def test_two_schedulers_running_the_same_job_at_once_run_it_once(config, database):
    started, finish, ran = threading.Event(), threading.Event(), []

    def slow_job(now):
        started.set()
        finish.wait(timeout=10)

    first = threading.Thread(target=lambda: ran.append(run_exclusive("dirty", slow_job, config)))
    first.start()
    assert started.wait(timeout=10)
    second = []
    threading.Thread(target=lambda: second.append(run_exclusive("dirty", slow_job, config))).start()
    while not second:
        threading.Event().wait(0.01)
    finish.set()
    first.join()
    assert ran == [True] and second == [False]
    assert run_exclusive("daily", lambda now: None, config) is True


def test_scheduled_jobs_coalesce_and_never_overlap_themselves(config):
    jobs = {job.id: job for job in build(config).get_jobs()}
    assert set(jobs) == {"dirty", "health", "daily"}
    for job in jobs.values():
        assert job.coalesce is True and job.max_instances == 1
    assert str(jobs["daily"].trigger) == "cron[hour='0', minute='5']"
    assert jobs["dirty"].trigger.interval.total_seconds() == 60
    assert jobs["health"].trigger.interval.total_seconds() == 3600
