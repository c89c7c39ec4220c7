"""The soak's traffic: a feeder appending report mail at a steady rate, readers calling every
route with rotating keys, and a watcher timing when each report shows in /reports, the
overview and its domain's health. Each keeps what it saw for the checks."""
from __future__ import annotations

import collections
import datetime as dt
import json
import random
import ssl
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from imapclient import IMAPClient

from bench.provider_mail import Mailer, Sent, conflicting_copy

# One append in 20 an exact copy; one in 25 a conflicting copy of a report already stored.
DUPLICATE_EVERY, CONFLICT_EVERY = 20, 25
# Each organization's keys: the readers rotate the first READER_KEYS; the watcher's two threads
# have one each. A thread looks at a waiting organization at most every LOOK_EVERY seconds, at
# most HEALTH_LOOKS domains a look, so each key stays under the abuse control (50 requests a key
# in 10 s).
READER_KEYS = 3
LISTING_KEY, SUMMARY_KEY = READER_KEYS, READER_KEYS + 1
KEYS_PER_ORG = READER_KEYS + 2
LOOK_EVERY, HEALTH_LOOKS = 2.0, 5


def get(base: str, path: str, key: str, timeout: float = 30):
    """(status, headers, parsed JSON or None) of a GET; a lost connection is status 0."""
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, headers, body = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, headers, body = error.code, error.headers, error.read()
    except OSError:
        return 0, {}, None
    try:
        return status, headers, json.loads(body)
    except ValueError:
        return status, headers, None


class Feeder(threading.Thread):
    """Appends the mailer's reports to the mailbox at `rate` a second until stopped, with
    exact copies and conflicting copies among them."""

    def __init__(self, mailbox, mailer: Mailer, rate: float):
        super().__init__(daemon=True)
        self.mailbox, self.mailer, self.rate = mailbox, mailer, rate
        self.sent: dict[tuple, tuple[float, Sent]] = {}
        self.listed: dict[tuple, float] = {}        # the watcher's: stored reports
        self.conflicted: set[tuple] = set()         # reports sent again with other content
        self.duplicates = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        imap = self.mailbox.client()
        reports = self.mailer.feed()
        started = time.monotonic()
        count = 0
        while not self.stopping.is_set():
            delay = started + count / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            count += 1
            raw, sent = self._next(count, reports)
            imap.append("INBOX", raw)
            if sent is not None:
                self.sent[(sent.kind, sent.domain, sent.report_id)] = (time.time(), sent)
        imap.logout()

    def _next(self, count: int, reports) -> tuple[bytes, Sent | None]:
        """The next message and the report it newly sends (None for a copy)."""
        stored = [item for item in list(self.listed) if item[0] == "dmarc"
                  and item not in self.conflicted]
        if stored and count % CONFLICT_EVERY == 0:
            item = random.choice(stored)
            self.conflicted.add(item)
            return conflicting_copy(self.sent[item][1], self.mailer), None
        if self.sent and count % DUPLICATE_EVERY == 0:
            self.duplicates += 1
            return random.choice(list(self.sent.values()))[1].raw, None
        sent = next(reports)
        return sent.raw, sent


class Mailbox:
    """The soak's Dovecot mailbox as its feeder logs in to it."""

    def __init__(self, server, user: str, password: str):
        self.server, self.user, self.password = server, user, password

    def client(self) -> IMAPClient:
        context = ssl.create_default_context(cafile=self.server.ca_file)
        imap = IMAPClient("127.0.0.1", port=self.server.imaps_port, ssl=True,
                          ssl_context=context)
        imap.login(self.user, self.password)
        return imap

    def waiting(self) -> int:
        with self.client() as imap:
            return imap.folder_status("INBOX", [b"MESSAGES"])[b"MESSAGES"]


@dataclass
class Seen:
    """What the readers and the watcher saw."""
    statuses: collections.Counter = field(default_factory=collections.Counter)
    failures: list = field(default_factory=list)        # (time, route, status, code)
    unavailable: list = field(default_factory=list)     # (time, retry-after) of each 503
    remaining: dict = field(default_factory=lambda: collections.defaultdict(list))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, org: str, route: str, status: int, headers, body) -> None:
        code = body.get("code", "") if isinstance(body, dict) else ""
        with self.lock:
            self.statuses[(route, status)] += 1
            if status >= 500 or status == 0:
                self.failures.append((time.time(), route, status, code))
            if status == 503 and code == "storage_unavailable":
                self.unavailable.append((time.time(), headers.get("Retry-After")))
            # /api-keys/usage is abuse-checked but not counted: its remaining repeats.
            if (status != 429 and route != "/api-keys/usage" and headers
                    and headers.get("X-RateLimit-Remaining") is not None):
                window = headers.get("X-RateLimit-Reset")
                self.remaining[(org, window)].append(int(headers["X-RateLimit-Remaining"]))


ROUTES = ("/reports", "/reports?sort_by=received&limit=5", "/reports/date-range",
          "/reports/{report}", "/dashboard/overview", "/statistics", "/compliance-score",
          "/compliance-score/history", "/trends", "/top-sources", "/domains",
          "/domains/{domain}/health", "/sources", "/sources?sort_by=messages", "/events",
          "/api-keys/usage", "/enums", "/tls-reports", "/tls-reports/{tls}")


class Readers(threading.Thread):
    """Calls every route on both hosts at `rate` a second, each request with the next key of
    a random organization."""

    def __init__(self, hosts, keys, domains, rate: float, seen: Seen):
        super().__init__(daemon=True)
        self.hosts, self.keys, self.domains, self.rate, self.seen = hosts, keys, domains, rate, seen
        self.ids: dict[tuple[str, str], str] = {}
        self.stopping = threading.Event()

    def run(self) -> None:
        rng = random.Random(3)
        turn = collections.Counter()
        started, count = time.monotonic(), 0
        while not self.stopping.is_set():
            delay = started + count / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            org = rng.choice(list(self.keys))
            readers_keys = self.keys[org][:READER_KEYS]
            key = readers_keys[turn[org] % len(readers_keys)]
            turn[org] += 1
            route = ROUTES[count % len(ROUTES)]
            path = route.format(domain=rng.choice(self.domains[org]),
                                report=self.ids.get((org, "report"), "0" * 26),
                                tls=self.ids.get((org, "tls"), "0" * 26))
            status, headers, body = get(self.hosts[count % len(self.hosts)], path, key)
            self.seen.note(org, route, status, headers, body)
            self._remember(org, route, body)
            count += 1

    def _remember(self, org: str, route: str, body) -> None:
        """A report id from each list, so the detail routes ask for real ones."""
        if route == "/reports" and isinstance(body, dict) and body.get("reports"):
            self.ids[(org, "report")] = body["reports"][0]["id"]
        if route == "/tls-reports" and isinstance(body, dict) and body.get("tls_reports"):
            self.ids[(org, "tls")] = body["tls_reports"][0]["id"]


class Watcher:
    """Times each report's way from its append to /reports, to the overview's total and to its
    domain's health total (the first look that shows it). Two threads, each with a key of its
    own, look at the organizations waiting on them in turn: one lists, one reads the summaries,
    so a slow round of summaries never delays a listing (the resolution is one round of looks).
    `stored` is the report's own received_at, which no look delays (whole seconds)."""

    def __init__(self, hosts, keys, feeder: Feeder, seen: Seen):
        self.hosts, self.keys, self.feeder, self.seen = hosts, keys, feeder, seen
        self.listed = feeder.listed                # (kind, domain, report id) -> seen at
        self.stored: dict[tuple, float] = {}       # the same -> its received_at
        self.summarized: dict[tuple, float] = {}   # the same, in the overview and the health
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._watch, args=(waiting, look), daemon=True)
                        for waiting, look in ((self._unlisted, self._list),
                                              (self._unsummarized, self._summaries))]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join()

    def _watch(self, waiting, look) -> None:
        turn = 0
        looked: dict[str, float] = {}
        while not self.stopping.is_set():
            due = {org: items for org, items in waiting().items()
                   if time.monotonic() - looked.get(org, 0) >= LOOK_EVERY}
            if not due:
                time.sleep(0.2)
            for org, items in due.items():
                looked[org] = time.monotonic()
                look(self.hosts[turn % len(self.hosts)], org, items)
                turn += 1

    def _unlisted(self) -> dict[str, list]:
        waiting = collections.defaultdict(list)
        for item, (at, sent) in list(self.feeder.sent.items()):
            if item not in self.listed:
                waiting[sent.org].append(item)
        return waiting

    def _unsummarized(self) -> dict[str, list]:
        waiting = collections.defaultdict(list)
        for item, (at, sent) in list(self.feeder.sent.items()):
            if sent.kind == "dmarc" and item in self.listed and item not in self.summarized:
                waiting[sent.org].append(item)
        return waiting

    def _list(self, base: str, org: str, items: list) -> None:
        key = self.keys[org][LISTING_KEY]
        now = time.time()
        for kind, route, rows in (("dmarc", "/reports?sort_by=received&limit=200", "reports"),
                                  ("tls", "/tls-reports?limit=200", "tls_reports")):
            if not any(item[0] == kind for item in items):
                continue
            status, headers, body = get(base, route, key)
            self.seen.note(org, route, status, headers, body)
            if status != 200:
                continue
            for row in body[rows]:
                domain = row.get("domain") or row["policy_domains"][0]
                item = (kind, domain, row["report_id"])
                if item not in self.listed and row.get("received_at"):
                    self.stored[item] = dt.datetime.fromisoformat(
                        row["received_at"].replace("Z", "+00:00")).timestamp()
                self.listed.setdefault(item, now)

    def _summaries(self, base: str, org: str, items: list) -> None:
        """A DMARC report is summarized once the overview and its domain's health count at
        least every message sent to them up to it (totals only grow)."""
        key = self.keys[org][SUMMARY_KEY]
        now = time.time()
        status, headers, body = get(base, "/dashboard/overview", key)
        self.seen.note(org, "/dashboard/overview", status, headers, body)
        if status != 200:
            return
        overview = body["org_health"]["total_messages"]
        healths: dict[str, int] = {}
        expected_org, expected_domain = 0, collections.Counter()
        for at, item, report in sorted(self.feeder_org(org)):
            expected_org += report.total
            expected_domain[report.domain] += report.total
            if item in self.summarized or item not in self.listed:
                continue
            if report.domain not in healths and len(healths) < HEALTH_LOOKS:
                status, headers, body = get(base, f"/domains/{report.domain}/health", key)
                self.seen.note(org, "/domains/{domain}/health", status, headers, body)
                healths[report.domain] = body["total_messages"] if status == 200 else -1
            health = healths.get(report.domain, -1)
            if overview >= expected_org and health >= expected_domain[report.domain]:
                self.summarized[item] = now

    def feeder_org(self, org: str):
        return [(at, item, s) for item, (at, s) in list(self.feeder.sent.items())
                if s.org == org and s.kind == "dmarc"]
