"""The soak's processes: rua's kept running as systemd keeps a unit with Restart=always, each
output line stamped with the wall time it arrived; and a table held against writes."""
from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import threading
import time

import psycopg2

from tests.servers import children

RESTART_SECONDS = 0.1          # systemd's RestartSec default


def hold_lock(url: str, table: str, seconds: float) -> threading.Thread:
    """A session that holds `table` against writes (reads go on) for `seconds`: a slow Postgres
    as ingest meets it when another transaction sits on the table it writes."""
    def hold():
        connection = psycopg2.connect(url)
        with connection.cursor() as cursor:
            cursor.execute(f'LOCK TABLE "{table}" IN SHARE ROW EXCLUSIVE MODE')
            time.sleep(seconds)
        connection.rollback()
        connection.close()
    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread


class Service:
    """One rua process kept running: restarted RESTART_SECONDS after it exits, as systemd does,
    until stop(). Its output lines are kept as (wall time, line) and written to its log."""

    def __init__(self, name: str, argv: list[str], env: dict, log: pathlib.Path, cwd: str):
        self.name, self.argv, self.env, self.cwd = name, argv, {**env, "PGAPPNAME": name}, cwd
        self.log = open(log, "a", buffering=1)
        self.lines: list[tuple[float, str]] = []
        self.exits: list[tuple[float, int]] = []
        self.starts: list[float] = []
        self.process: subprocess.Popen | None = None
        self._stopping = False
        self._lock = threading.Lock()

    def start(self) -> "Service":
        with self._lock:
            self.process = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd,
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            start_new_session=True)
            self.starts.append(time.time())
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()
        return self

    def kill(self) -> None:
        """kill -9 of the process (its children too, as systemd's KillMode=control-group)."""
        with self._lock:
            os.killpg(self.process.pid, signal.SIGKILL)

    def stop(self) -> None:
        self._stopping = True
        with self._lock:
            if self.process and self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGTERM)
                try:
                    self.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait()

    def pids(self) -> list[int]:
        """The process and its children (gunicorn's workers)."""
        pid = self.process.pid
        return [pid, *children(pid)]

    def rss(self) -> int:
        """Resident bytes of the process and its children."""
        total = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/statm") as stream:
                    total += int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except OSError:
                pass
        return total

    def _read(self, process: subprocess.Popen) -> None:
        for raw in process.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append((time.time(), line))
            self.log.write(f"{self.lines[-1][0]:.3f} {line}\n")
        code = process.wait()
        self.exits.append((time.time(), code))
        if not self._stopping:
            time.sleep(RESTART_SECONDS)
            if not self._stopping:
                self.start()
