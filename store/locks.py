"""Locks shared by every process and host: advisory locks on Postgres, lock files on SQLite.

Both are tried, never waited for in a queue, so a busy lock is an answer ("someone else is on
it"); a taker may try again for a bounded few seconds. A process that dies lets go of both (its
session ends, its descriptor closes).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
import zlib
from typing import Callable

from store import db, is_postgres

NAMESPACE = 0x72756100 >> 1      # first key of every rua advisory lock ("rua\0" >> 1: fits int4)
POLL_SECONDS = 0.05              # how often a taker that may wait tries again


_held: set[int] = set()
_mutex = threading.Lock()


def _int4(text: str) -> int:
    value = zlib.crc32(text.encode())
    return value - 2**32 if value >= 2**31 else value


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


@contextlib.contextmanager
def exclusive(name: str, lock_dir: str, wait: float = 0):
    """Try to hold the lock `name` for the block; yields True if held, False if someone has it
    (still, after trying again every POLL_SECONDS for `wait` seconds)."""
    deadline = time.monotonic() + wait
    release = _take(name, lock_dir)
    while release is None and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        release = _take(name, lock_dir)
    try:
        yield release is not None
    finally:
        if release is not None:
            release()


def _take(name: str, lock_dir: str) -> Callable[[], None] | None:
    """Take the lock now if it is free; what lets go of it, or None when someone has it."""
    if is_postgres():
        key = _int4(name)
        # Advisory locks are re-entrant within one session; remembering what this process
        # holds makes a second taker here refused, as a second flock() would be.
        with _mutex:
            held = key not in _held and db.execute_sql(
                "SELECT pg_try_advisory_lock(%s, %s)", (NAMESPACE, key)).fetchone()[0]
            if not held:
                return None
            _held.add(key)

        def release():
            with _mutex:
                _held.discard(key)
                db.execute_sql("SELECT pg_advisory_unlock(%s, %s)", (NAMESPACE, key))
        return release
    directory = os.path.join(lock_dir, "locks")
    os.makedirs(directory, exist_ok=True)
    fd = os.open(os.path.join(directory, _safe(name) + ".lock"), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return lambda: os.close(fd)


@contextlib.contextmanager
def slot(group: str, capacity: int, lock_dir: str):
    """Hold one of `capacity` slots of `group`; yields its number, or None when all are taken."""
    with contextlib.ExitStack() as stack:
        for number in range(capacity):
            if stack.enter_context(exclusive(f"{group}.{number}", lock_dir)):
                yield number
                return
        yield None
