"""The counters' writers on one host queue at a lock file before they ask for SQLite's write lock.

SQLite answers a busy write lock by sleeping, 1 ms at first and longer after, while a metering
statement holds that lock for some tens of microseconds. Under load about one request in eight
slept so (bench/metering.py, 4 workers): a worker idle for a whole millisecond while the lock
was long free again. A blocking flock() wakes the next writer as soon as the holder lets go.

Correctness never rests on this queue: SQLite's own lock still orders every write, so a writer
that does not queue (a CLI command, another tool) only waits the old way. The wait is bounded
by the holder's one statement, which gives up after SQLite's busy timeout.
"""
from __future__ import annotations

import fcntl
import logging
import os
import threading

log = logging.getLogger(__name__)


class WriterQueue:
    """A host-wide first-come lock, one open file per process and thread (flock() holds per
    open file, so threads and forked workers must not share one)."""

    def __init__(self) -> None:
        self.path: str | None = None
        self._local = threading.local()

    def point_at(self, path: str | None) -> None:
        """Queue at this lock file from now on; None: do not queue (Postgres, memory)."""
        self.path = path
        self._local = threading.local()

    def enter(self) -> int | None:
        """Wait for the turn; returns what leave() takes."""
        if self.path is None:
            return None
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            try:
                local.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as error:
                # Only the speed-up is lost: the writers wait on SQLite's lock as before.
                log.warning("not queueing the counters' writers at %s: %s", self.path, error)
                self.path = None
                return None
            local.pid = os.getpid()
        fcntl.flock(local.fd, fcntl.LOCK_EX)
        return local.fd

    @staticmethod
    def leave(fd: int | None) -> None:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
