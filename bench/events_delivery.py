"""Draining queued webhook deliveries (issue 18): 1,000 events raised for one webhook channel,
then `notify.drain.drain` sends them to a receiver on 127.0.0.1 that verifies every signature
with the standardwebhooks package (a process of its own, so it takes no CPU from the drain's).

The floor, in alternating rounds: the same number of signed POSTs to the same receiver on the
same number of threads, with no store at all; the ratio is what the outbox's claims and
bookkeeping cost on top of sending. Goal: 1,000 deliveries in under 20 s.

With --slow, one more drain after the rounds: each event also goes to a second channel whose
receiver trickles its answer a byte a second (issue 24). The figure to read is that drain's time
beside the rounds': a slow receiver costs one attempt's deadline, not one per row.
Run: .venv/bin/python bench/events_delivery.py [--events 1000] [--rounds 3] [--slow] [--database URL]
"""
from __future__ import annotations

import argparse
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import Config  # noqa: E402
from notify import drain as drain_module, message, webhook  # noqa: E402
from store import channels, events, open_db  # noqa: E402
from store.clock import utcnow  # noqa: E402
from store.ids import new_ulid  # noqa: E402
from store.migrations import migrate  # noqa: E402
from store.models import Organization  # noqa: E402

RECEIVER = r"""
import sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from standardwebhooks.webhooks import Webhook
verifier, lock, counts = Webhook(sys.argv[1]), threading.Lock(), {"ok": 0, "forged": 0}
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            verifier.verify(body, dict(self.headers.items())); key, status = "ok", 204
        except Exception:
            key, status = "forged", 401
        with lock:
            counts[key] += 1
        self.send_response(status); self.send_header("Content-Length", "0"); self.end_headers()
    def do_GET(self):
        body = f"{counts['ok']} {counts['forged']}".encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *args): pass
class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128     # the standard library's 5 drops connections (1 s SYN retry)
server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def received(url: str) -> tuple[int, int]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        ok, forged = answer.read().split()
    return int(ok), int(forged)


def queue(org_id: str, count: int) -> float:
    """Raise `count` deliverable events (each queued for the channel); seconds taken."""
    started, run = time.perf_counter(), new_ulid()
    for n in range(count):
        events.raise_event(org_id, "new_sender", f"new_sender:{run}:{n}", title=f"New sender 192.0.2.{n % 250}", domain="example.com",
                           link=f"/sources/192.0.2.{n % 250}")
    return time.perf_counter() - started


def floor(url: str, secret: str, count: int) -> float:
    """The same number of signed POSTs on the drain's threads, with no store: seconds."""
    data = {"id": new_ulid(), "type": "new_sender", "type_label": "New sending source",
            "severity": "info", "title": "New sender 192.0.2.1", "detail": "",
            "domain": "example.com", "link": "/sources/192.0.2.1", "acknowledged": False,
            "created_at": utcnow(), "organization": "bench"}
    config = Config(offline=True, outbound_unsafe_allow_private=True)    # 127.0.0.1: a lab

    def post(_):
        now = utcnow()
        webhook.send(url, secret, f"msg_{new_ulid()}", message.webhook_body("new_sender", data,
                                                                              now), now, config)
    started = time.perf_counter()
    with ThreadPoolExecutor(drain_module.THREADS) as pool:
        list(pool.map(post, range(count)))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", default="", help="a store URL (default: a temporary SQLite)")
    parser.add_argument("--slow", action="store_true",
                        help="one more drain with a trickling receiver beside (see above)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database or f"sqlite:///{tmp}/bench.db"
        config = Config(database_url=url, offline=True, outbound_unsafe_allow_private=True)
        database = open_db(url)
        secret = webhook.new_secret()
        receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, secret],
                                    stdout=subprocess.PIPE, text=True)
        try:
            port = int(receiver.stdout.readline())
            hook, counter = f"http://127.0.0.1:{port}/hook", f"http://127.0.0.1:{port}/count"
            with database.connection_context():
                migrate(database)
                org = Organization.create(name=f"bench-{new_ulid()}")
                channels.add(org.id, "webhook", hook, None, secret=secret)
                rounds(args, config, org.id, hook, counter, secret)
                if args.slow:
                    slow_round(args, config, org.id, counter)
        finally:
            receiver.terminate()
            receiver.wait()


def rounds(args, config, org_id: str, hook: str, counter: str, secret: str) -> None:
    drains, floors, queued = [], [], []
    for number in range(args.rounds):
        queued.append(queue(org_id, args.events))
        before = received(counter)[0]
        started = time.perf_counter()
        result = drain_module.drain(config)
        drains.append(time.perf_counter() - started)
        ok, forged = received(counter)
        assert result.delivered == args.events == ok - before and forged == 0, (result, ok)
        floors.append(floor(hook, secret, args.events))
        print(f"round {number + 1}: queue {queued[-1]:.2f} s, drain {drains[-1]:.2f} s, "
              f"floor {floors[-1]:.2f} s", flush=True)
    ratios = [d / f for d, f in zip(drains, floors)]
    print(f"{args.events} deliveries drained in {statistics.median(drains):.2f} s median "
          f"({min(drains):.2f}-{max(drains):.2f}; goal < 20 s), "
          f"{args.events / statistics.median(drains):.0f}/s; floor (signed POSTs, no store) "
          f"{statistics.median(floors):.2f} s; ratio {statistics.median(ratios):.2f} "
          f"({min(ratios):.2f}-{max(ratios):.2f}); queueing them with their events "
          f"{statistics.median(queued):.2f} s")


def slow_round(args, config, org_id: str, counter: str) -> None:
    """One drain with a second channel to a receiver that answers a byte a second."""
    trickler = socket.create_server(("127.0.0.1", 0), backlog=64)
    threading.Thread(target=_trickle_all, args=(trickler,), daemon=True).start()
    slow_hook = f"http://127.0.0.1:{trickler.getsockname()[1]}/slow"
    channels.add(org_id, "webhook", slow_hook, None, secret=webhook.new_secret())
    queue(org_id, args.events)
    before = received(counter)[0]
    started = time.perf_counter()
    result = drain_module.drain(config)
    elapsed = time.perf_counter() - started
    print(f"with a receiver trickling a byte a second beside: drain {elapsed:.2f} s; fast "
          f"receiver got {received(counter)[0] - before} of {args.events}; slow one: "
          f"{result.retried} to retry, {result.deferred} left for the next run "
          f"(attempt deadline {webhook.DEADLINE_SECONDS} s)")
    trickler.close()


def _trickle_all(server: socket.socket) -> None:
    answer = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nX-Pad: " + b"x" * 600
    while True:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        threading.Thread(target=_trickle, args=(connection, answer), daemon=True).start()


def _trickle(connection: socket.socket, answer: bytes) -> None:
    with connection:
        for byte in answer:
            time.sleep(1)
            try:
                connection.sendall(bytes([byte]))
            except OSError:
                return


if __name__ == "__main__":
    main()
