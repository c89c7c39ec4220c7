"""Locks across runners: one holder per job lock, N slots per group, released on exit."""
import threading

from store import locks
from jobs.scheduler import build, run_exclusive
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
    assert set(jobs) == {"dirty", "health", "dns", "sources", "notify", "hour", "daily"}
    for job in jobs.values():
        assert job.coalesce is True and job.max_instances == 1
    assert str(jobs["daily"].trigger) == "cron[hour='0', minute='5']"
    assert str(jobs["hour"].trigger) == "cron[minute='0', second='5']"
    assert jobs["dirty"].trigger.interval.total_seconds() == 60
    assert jobs["health"].trigger.interval.total_seconds() == 3600
    assert jobs["dns"].trigger.interval.total_seconds() == 3600
    assert jobs["notify"].trigger.interval.total_seconds() == 60
    assert jobs["sources"].trigger.interval.total_seconds() == 300


def test_rua_scheduler_refreshes_dirty_organizations_at_start_and_stops_on_sigterm(config, database, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from store import snapshots
    from tests.factories import make_org
    from tests.snapshotter.reports import TODAY, report_on

    org = make_org()
    report_on(org, "example.com", TODAY, [{"count": 3}])
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=config.database_url, RUA_LOCK_DIR=config.lock_dir, RUA_OFFLINE="1")
    log = tmp_path / "scheduler.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-c", "from cli import main; main()", "scheduler"],
                                   env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while snapshots.get(org.id, "overview") is None:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    assert "scheduler started: dirty, health, dns, sources, notify, hour, daily" in text and "Traceback" not in text
