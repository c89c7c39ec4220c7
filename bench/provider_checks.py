"""What the soak checks and prints: every report once with its totals, copies counted as such,
no 500, 503 with Retry-After through the Postgres restart and every process back within 5 s
without a restart, quotas exact across the hosts, no job twice at once, memory flat after
warm-up, and the freshness figures (append -> /reports, -> overview and health; append -> the
report's received_at, which no look of the watcher's delays)."""
from __future__ import annotations

import collections
import json
import statistics
import threading
import time
from dataclasses import dataclass

from bench.provider_traffic import get

RECOVERY_SECONDS = 5
WARM_UP = 1 / 3                # of the run: memory is compared from there on
MEMORY_GROWTH = 0.10
OVERLAP_SLACK = 0.2            # seconds: lines are stamped when they arrive, not when written


class Memory(threading.Thread):
    """Each process's resident memory every 5 s: (time, pid, bytes) per service."""

    def __init__(self, procs):
        super().__init__(daemon=True)
        self.procs = procs
        self.samples = collections.defaultdict(list)
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(5):
            for name, service in self.procs.items():
                self.samples[name].append((time.time(), service.process.pid, service.rss()))

    def growth(self, since: float) -> dict[str, float | None]:
        """Per service: the median of its last minute's samples over that of its first minute
        after `since`, minus 1; None when the process was restarted after `since` (nothing to
        compare). Medians, as a job's pool of processes lives a few seconds: one sample taken
        while it runs is not growth."""
        grown = {}
        for name, samples in self.samples.items():
            later = [s for s in samples if s[0] >= since]
            if len(later) < 6 or len({pid for _, pid, _ in later}) > 1:
                grown[name] = None
                continue
            first = [size for at, _, size in later if at < later[0][0] + 60]
            last = [size for at, _, size in later if at > later[-1][0] - 60]
            grown[name] = statistics.median(last) / statistics.median(first) - 1
        return grown

    def by_minute(self, began: float) -> dict[str, list[int]]:
        """Per service: the median of its resident MB in each whole minute of the run."""
        shown = {}
        for name, samples in self.samples.items():
            minutes = collections.defaultdict(list)
            for at, _, size in samples:
                minutes[int((at - began) // 60)].append(size)
            shown[name] = [round(statistics.median(minutes[m]) / 2**20) for m in sorted(minutes)]
        return shown


def percentile(values, share: float):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@dataclass
class Results:
    """What one soak run kept, read by the checks."""
    args: dict
    began: float
    fed_until: float
    feeder: object
    watcher: object
    seen: object
    faults: object
    memory: Memory
    procs: dict
    hosts: list
    keys: dict
    url: str

    def collect(self) -> dict:
        """The figures, and under "checks" each check's outcome."""
        figures = {**self.reports(), **self.answers(), **self.processes()}
        figures["checks"] = checks(figures, self.faults.done)
        return figures

    def reports(self) -> dict:
        listed = self.listed()
        sent = {item: sent for item, (_, sent) in self.feeder.sent.items()}
        not_once = [item for item in sent if len(listed.get(item, ())) != 1]
        # A conflicting copy takes the stored report's place when it speaks for its reporter
        # (a verified signature) where the stored one did not (ingest/copies.py).
        replaced = [item for item in self.feeder.conflicted
                    if listed.get(item) == [sent[item].total + 1]]
        wrong = [item for item, s in sent.items() if item not in not_once
                 and listed[item] != [s.total] and item not in replaced]
        return {
            "reports_sent": len(sent), "reports_listed": sum(len(v) for v in listed.values()),
            "not_once": len(not_once), "other_totals": len(wrong),
            "examples": [list(i) + [sent[i].total, listed.get(i)] for i in not_once + wrong][:10],
            "unknown_listed": len([item for item in listed if item not in sent]),
            "duplicates_sent": self.feeder.duplicates,
            "conflicts_sent": len(self.feeder.conflicted),
            "copies_kept": self.copies_kept(), "copies_took_place": len(replaced),
            "authenticity": self.authenticity(), "fetch_outcomes": self.fetch_outcomes(),
            "freshness": self.freshness(),
            "freshness_p95_by_minute": self.freshness_by_minute(),
        }

    def answers(self) -> dict:
        return {
            "statuses": {f"{r} {s}": n for (r, s), n in sorted(self.seen.statuses.items())},
            "errors_500": [f for f in self.seen.failures if f[2] == 500][:20],
            "unavailable_503": len(self.seen.unavailable),
            "answers_lost": len(self.seen.failures), "quota": self.quota(),
        }

    def processes(self) -> dict:
        restart = _restart(self.faults.done)
        return {
            "faults": self.faults.done, "recovery": self.recovery(restart),
            "failed_runs_after_restart": self.failed_runs(restart["up_at"]),
            "job_overlaps": self.overlaps(),
            "exits": {name: [c for _, c in p.exits] for name, p in self.procs.items()},
            "memory_growth": self.memory.growth(self.settled()),
            "memory_mb_by_minute": self.memory.by_minute(self.began),
        }

    def settled(self) -> float:
        """When memory is compared from: after the warm-up, and a minute after the last
        fault (a standby scheduler grows once it takes the jobs over: a step, not a leak)."""
        warm = self.began + WARM_UP * self.args["minutes"] * 60
        return max(warm, self.faults.ended + 60)

    def listed(self) -> dict[tuple, list[int]]:
        """(kind, domain, report id) -> the totals of every row /reports and /tls-reports list."""
        found = collections.defaultdict(list)
        for org, keys in self.keys.items():
            for route, rows, total in (("/reports", "reports", "total_messages"),
                                       ("/tls-reports", "tls_reports", None)):
                offset = 0
                while True:
                    body = self.patiently(org, route, f"{route}?limit=200&offset={offset}",
                                          keys[offset // 200 % len(keys)])
                    if not body[rows]:
                        break
                    for row in body[rows]:
                        domain = row.get("domain") or row["policy_domains"][0]
                        amount = row[total] if total else (row["successful_sessions"]
                                                           + row["failed_sessions"])
                        kind = "dmarc" if total else "tls"
                        found[(kind, domain, row["report_id"])].append(amount)
                    offset += 200
        return found

    def patiently(self, org: str, route: str, path: str, key: str) -> dict:
        """The body of a 200, asked again after each 429 or 503 as its Retry-After says."""
        for _ in range(30):
            status, headers, body = get(self.hosts[0], path, key)
            self.seen.note(org, route, status, headers, body)
            if status == 200:
                return body
            time.sleep(float(headers.get("Retry-After", 1)) if headers else 1)
        raise RuntimeError(f"{path} never answered 200 (last {status})")

    def copies_kept(self) -> int:
        return self._query("SELECT count(*) FROM report_copy")[0][0]

    def authenticity(self) -> dict[str, int]:
        """Stored DMARC reports by what their mail proved (verified, unchecked: ...)."""
        return dict(self._query("SELECT authenticity, count(*) FROM report GROUP BY 1"))

    def _query(self, sql: str) -> list:
        from store import open_db
        database = open_db(self.url)
        with database.connection_context():
            rows = database.execute_sql(sql).fetchall()
        database.close_all()
        return rows

    def fetch_outcomes(self) -> dict[str, int]:
        """Each message's outcome as the fetchers said it (JSON lines with a status)."""
        outcomes = collections.Counter()
        for name, service in self.procs.items():
            if name.startswith("fetcher-"):
                for _, line in service.lines:
                    row = _json(line)
                    for report in row.get("reports", ()) if row else ():
                        outcomes[report.get("status", "?")] += 1
        return dict(outcomes)

    def recovery(self, restart: dict) -> dict[str, float | None]:
        """Seconds from Postgres answering again to each host's first 200, each other
        process's first session (a scheduler's comes when its next job is due: within a
        minute; a fetcher's at its next batch, when Dovecot's IDLE tells it of new mail) and
        the first report stored."""
        back = {h["host"]: h["recovered_after"] for h in restart["hosts"]}
        first = self.faults.reconnected.first
        for name in self.procs:
            if not name.startswith("host-"):
                back[name] = first.get(name)
        stored = [at for name, service in self.procs.items() if name.startswith("fetcher-")
                  for at, line in list(service.lines)
                  if at > restart["up_at"] and '"status":"stored"' in line]
        back["ingest"] = min(stored) - restart["up_at"] if stored else None
        return back

    def failed_runs(self, since: float) -> list:
        """Job runs the schedulers logged as failed after Postgres answered again."""
        return [(name, line[:200]) for name, service in self.procs.items()
                if name.startswith("scheduler-")
                for at, line in service.lines
                if at > since + 1 and (_json(line) or {}).get("outcome") == "failed"]

    def quota(self) -> dict:
        """Per organization and hour: the remaining counts the hosts answered are all distinct
        (no request allowed twice on one count), and the store's count against them (more
        only by requests counted whose answer was lost: 503s and dropped connections)."""
        double = [k for k, values in self.seen.remaining.items()
                  if len(values) != len(set(values))]
        answered = sum(len(v) for v in self.seen.remaining.values())
        return {"windows": len(self.seen.remaining), "answered_metered": answered,
                "counted": self.counted(), "double": double[:10]}

    def counted(self) -> int:
        from store import open_db
        from store.models import Usage
        database = open_db(self.url)
        with database.connection_context():
            rows = Usage.select().where(Usage.key_id == "")
            total = sum(row.allowed for row in rows)
        database.close_all()
        return total

    def overlaps(self) -> list:
        """Runs of one job by the two schedulers that overlapped in time."""
        runs = collections.defaultdict(list)
        for name, service in self.procs.items():
            if name.startswith("scheduler-"):
                for at, line in service.lines:
                    row = _json(line)
                    if row and "job" in row and "seconds" in row:
                        runs[row["job"]].append((at - float(row["seconds"]), at, name))
        found = []
        for job, spans in runs.items():
            spans.sort()
            for (a_start, a_end, a), (b_start, b_end, b) in zip(spans, spans[1:]):
                if a != b and b_start < a_end - OVERLAP_SLACK:
                    found.append((job, a, b, round(a_end - b_start, 2)))
        return found

    def delays(self) -> dict[str, list[tuple[float, float]]]:
        """(appended at, seconds until seen) of each report the watcher saw, by what it was seen
        in: /reports, its received_at, the overview and health."""
        seen = {"reports": self.watcher.listed, "stored": self.watcher.stored,
                "overview_health": self.watcher.summarized}
        found = {name: [] for name in seen}
        for item, (at, _) in self.feeder.sent.items():
            for name, when in seen.items():
                if item in when:
                    found[name].append((at, when[item] - at))
        return found

    def freshness(self) -> dict:
        figures = {}
        for name, pairs in self.delays().items():
            values = [delay for _, delay in pairs]
            figures[name] = {"count": len(values), "p50": percentile(values, 0.5),
                             "p95": percentile(values, 0.95), "max": max(values, default=None)}
        return figures

    def freshness_by_minute(self) -> dict[str, list]:
        """p95 of append -> /reports and -> received_at over the reports appended in each
        minute of the run (None: none appended or seen): whether the slow ones gather around
        the faults."""
        delays = self.delays()
        appended = [at for at, _ in self.feeder.sent.values()]
        last = int((max(appended) - self.began) // 60) if appended else -1
        found = {}
        for name in ("reports", "stored"):
            minutes = collections.defaultdict(list)
            for at, delay in delays[name]:
                minutes[int((at - self.began) // 60)].append(delay)
            found[name] = [round(percentile(minutes[m], 0.95), 1) if minutes[m] else None
                           for m in range(last + 1)]
        return found


def _restart(faults: list[dict]) -> dict:
    return next(f for f in faults if f["fault"] == "restart_postgres")


def checks(figures: dict, faults: list[dict]) -> dict[str, bool]:
    """Each check by its sentence: whether the run's figures pass it."""
    restart, recovery = _restart(faults), figures["recovery"]
    killed = {f.get("killed") for f in faults}
    quota = figures["quota"]
    return {
        "every report once with its totals": not (figures["not_once"] or figures["other_totals"]
                                                  or figures["unknown_listed"]),
        # Either way one copy is kept aside: the one that came, or the stored one it replaced.
        "conflicting copies kept aside": figures["copies_kept"] == figures["conflicts_sent"],
        "no 500": not figures["errors_500"],
        "503 storage_unavailable with Retry-After during the restart": all(
            any(d.startswith("503 storage_unavailable Retry-After=") for d in h["during"])
            for h in restart["hosts"]),
        "hosts answering and reports stored within 5 s": all(
            recovery[name] is not None and recovery[name] <= RECOVERY_SECONDS
            for name in [h["host"] for h in restart["hosts"]] + ["ingest"]),
        # A watcher the other one spared any work, or a scheduler whose job was not yet due,
        # has no session to show before the run ends: one of each kind back is the sign, and
        # "no process exited" says that none needed a restart.
        "fetchers and schedulers back at their next work, without a restart": all(
            any(r is not None for name, r in recovery.items() if name.startswith(kind))
            for kind in ("fetcher-", "scheduler-"))
        and not figures["failed_runs_after_restart"],
        "no process exited but the killed": all(
            len(codes) <= (1 if name in killed else 0)
            for name, codes in figures["exits"].items()),
        "quotas exact across the hosts": not quota["double"] and (
            0 <= quota["counted"] - quota["answered_metered"] <= figures["answers_lost"]),
        "no job twice at once": not figures["job_overlaps"],
        "memory growth under 10% once settled": all(
            g is None or g < MEMORY_GROWTH for g in figures["memory_growth"].values()),
    }


def _json(line: str):
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def show(figures: dict) -> None:
    print("\nfigures:")
    for name, value in figures.items():
        if name != "checks":
            print(f"  {name}: {json.dumps(value, default=str)}")
    print("\nchecks:")
    for name, passed in figures["checks"].items():
        print(f"  {'ok  ' if passed else 'FAIL'} {name}")
