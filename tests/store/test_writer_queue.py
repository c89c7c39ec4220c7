"""The counters' writers on one host take turns at a lock file (store/writer_queue.py)."""
from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

import store
from store.writer_queue import WriterQueue


@pytest.fixture
def queue(tmp_path):
    queue = WriterQueue()
    queue.point_at(str(tmp_path / "rua.meter.db.lock"))
    return queue


def test_a_queue_pointed_nowhere_lets_everyone_through():
    queue = WriterQueue()
    queue.point_at(None)
    assert queue.enter() is None
    queue.leave(None)


def test_a_second_thread_waits_until_the_first_leaves(queue):
    turn = queue.enter()
    entered = threading.Event()

    def second():
        queue.leave(queue.enter())
        entered.set()

    thread = threading.Thread(target=second)
    thread.start()
    assert not entered.wait(0.3)
    queue.leave(turn)
    assert entered.wait(5)
    thread.join()


def _enter_and_leave(queue):
    queue.leave(queue.enter())


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_a_forked_worker_opens_its_own_file_and_waits_its_turn(queue):
    turn = queue.enter()                      # the parent's open file goes to the child too
    child = multiprocessing.get_context("fork").Process(target=_enter_and_leave, args=(queue,))
    child.start()
    child.join(0.3)
    assert child.is_alive()
    queue.leave(turn)
    child.join(5)
    assert child.exitcode == 0


def test_a_lock_file_that_cannot_be_made_only_turns_the_queue_off(tmp_path, caplog):
    queue = WriterQueue()
    queue.point_at(str(tmp_path / "missing" / "rua.meter.db.lock"))
    assert queue.enter() is None
    assert queue.path is None
    assert "not queueing" in caplog.text


def test_a_sqlite_store_queues_beside_its_counters_file_and_postgres_not_at_all(database, config):
    path = store.sqlite_path(config.database_url)
    if path is None:
        assert store.meter_writers.path is None
        return
    assert store.meter_writers.path == store.meter_path(path) + ".lock"
    store.meter_writers.leave(store.meter_writers.enter())
    assert os.path.exists(store.meter_writers.path)
