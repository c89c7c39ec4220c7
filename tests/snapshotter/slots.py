"""Another runner holding some of an organization's overview slots, for the concurrency-cap tests."""
from __future__ import annotations

import contextlib
import threading

from store import locks
from store import db

MOST_SLOTS = 8      # the largest plan's cap: holding n slots takes the lowest n under any cap


@contextlib.contextmanager
def slots_held_elsewhere(org, count, lock_dir):
    """A thread with its own connection holds `count` of the org's slots; yields their numbers."""
    taken, release, numbers = threading.Event(), threading.Event(), []

    def holder():
        with db.connection_context(), contextlib.ExitStack() as stack:
            for _ in range(count):
                numbers.append(stack.enter_context(
                    locks.slot(f"overview.{org.id}", MOST_SLOTS, lock_dir)))
            taken.set()
            release.wait(timeout=60)

    thread = threading.Thread(target=holder)
    thread.start()
    taken.wait(timeout=30)
    try:
        yield numbers
    finally:
        release.set()
        thread.join()
