"""The soak's faults on a schedule (fractions of the run): kill -9 of the fetcher holding the
mailbox lock, kill -9 of a scheduler holding a job's lock, a Postgres restart (fast shutdown) with
both hosts probed through it, and a table ingest writes locked for 10 s."""
from __future__ import annotations

import threading
import time

import psycopg2

from bench.provider_cluster import hold_lock
from bench.provider_traffic import get

FAULTS = ((0.2, "kill_fetcher"), (0.35, "kill_scheduler"), (0.5, "restart_postgres"),
          (0.7, "slow_postgres"))
HOLDER_WAIT = 90               # seconds to wait for a process in the middle of its work
APART = 15                     # seconds at least between faults: a killed process is back
RECONNECT_WAIT = 90            # an idle scheduler reconnects at its next job: within a minute
SLOW_TABLE, SLOW_SECONDS = "report", 10
NAMESPACE = 0x72756100 >> 1    # store/locks.py's first key of every rua advisory lock


class Schedule:
    """Runs the faults at their times, then waits out the run; `done` says what happened."""

    def __init__(self, postgres, url, procs, hosts, keys, seconds: float, seen):
        self.postgres, self.url, self.procs, self.hosts = postgres, url, procs, hosts
        self.org, self.key = next((org, k[0]) for org, k in keys.items())
        self.seen = seen
        self.seconds = seconds
        self.done: list[dict] = []
        self.ended = 0.0                       # when the last fault was over
        self.reconnected: Reconnected | None = None

    def run(self, began: float) -> None:
        ended = began
        for share, name in FAULTS:
            wait = max(began + share * self.seconds, ended + APART) - time.time()
            if wait > 0:
                time.sleep(wait)
            fault = {"fault": name, "at": time.time() - began}
            fault.update(getattr(self, name)())
            self.done.append(fault)
            ended = self.ended = time.time()
            print(f"  fault at {fault['at']:.0f} s: {fault}", flush=True)
        rest = began + self.seconds - time.time()
        if rest > 0:
            time.sleep(rest)

    def kill_fetcher(self) -> dict:
        return self._kill_holder("fetcher-")

    def kill_scheduler(self) -> dict:
        return self._kill_holder("scheduler-")

    def _kill_holder(self, prefix: str) -> dict:
        """kill -9 of the process of that kind that holds a job lock (in its work), waiting
        for one up to HOLDER_WAIT seconds."""
        deadline = time.monotonic() + HOLDER_WAIT
        connection = psycopg2.connect(self.url, connect_timeout=2)
        connection.autocommit = True
        try:
            while time.monotonic() < deadline:
                holder = _holder(connection, prefix)
                if holder:
                    self.procs[holder].kill()
                    return {"killed": holder, "killed_at": time.time()}
                time.sleep(0.02)
        finally:
            connection.close()
        return {"killed": None}

    def restart_postgres(self) -> dict:
        """Stop (fast), start again; both hosts probed until they answer 200 after it."""
        probes = [Probe(host, self.org, self.key, self.seen) for host in self.hosts]
        for probe in probes:
            probe.start()
        time.sleep(0.5)
        down_at = time.time()
        self.postgres.stop("fast")
        time.sleep(2)
        self.postgres.start()
        up_at = self.postgres.wait_answering()
        self.reconnected = Reconnected(self.url, up_at)
        self.reconnected.start()
        for probe in probes:
            probe.up_at = up_at
            probe.join(timeout=60)
        return {"down_at": down_at, "up_at": up_at,
                "hosts": [probe.result() for probe in probes]}

    def slow_postgres(self) -> dict:
        started = time.time()
        hold_lock(self.url, SLOW_TABLE, SLOW_SECONDS).join()
        return {"table": SLOW_TABLE, "held": time.time() - started, "from": started}


def _holder(connection, prefix: str) -> str | None:
    """The process named prefix... whose session holds one of rua's advisory locks."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s "
            "AND a.application_name LIKE %s", (NAMESPACE, prefix + "%"))
        row = cursor.fetchone()
    return row[0] if row else None


class Reconnected(threading.Thread):
    """When each process first has a session of Postgres again after the restart (its
    application_name is its service's name), looked at every 100 ms for RECONNECT_WAIT s."""

    def __init__(self, url: str, up_at: float):
        super().__init__(daemon=True)
        self.url, self.up_at = url, up_at
        self.first: dict[str, float] = {}

    def run(self) -> None:
        connection = psycopg2.connect(self.url)
        connection.autocommit = True
        deadline = time.monotonic() + RECONNECT_WAIT
        with connection.cursor() as cursor:
            while time.monotonic() < deadline:
                cursor.execute("SELECT DISTINCT application_name FROM pg_stat_activity "
                               "WHERE application_name ~ '^(host|fetcher|scheduler)-'")
                for (name,) in cursor.fetchall():
                    self.first.setdefault(name, time.time() - self.up_at)
                time.sleep(0.1)
        connection.close()


class Probe(threading.Thread):
    """GET /enums on one host every 50 ms until it answers 200 after Postgres is up again."""

    def __init__(self, host: str, org: str, key: str, seen):
        super().__init__(daemon=True)
        self.host, self.org, self.key, self.seen = host, org, key, seen
        self.up_at: float | None = None
        self.answers: list[tuple[float, int, str, str | None]] = []

    def run(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status, headers, body = get(self.host, "/enums", self.key, timeout=10)
            self.seen.note(self.org, "/enums", status, headers, body)
            code = body.get("code", "") if isinstance(body, dict) else ""
            self.answers.append((time.time(), status, code,
                                 headers.get("Retry-After") if headers else None))
            if status == 200 and self.up_at and self.answers[-1][0] > self.up_at:
                return
            time.sleep(0.05)

    def result(self) -> dict:
        down = [a for a in self.answers if a[1] != 200]
        recovered = next((a[0] for a in self.answers
                          if a[1] == 200 and self.up_at and a[0] > self.up_at), None)
        return {"host": self.host,
                "during": sorted({f"{a[1]} {a[2]} Retry-After={a[3]}" for a in down}),
                "recovered_after": None if recovered is None else recovered - self.up_at}
