"""The floor under metering's cost, for `bench/metering.py --floor`: the real app with
store.usage.admit replaced by the least that some kind of design must do for each request.

- constant_app: no count at all (a constant tally): the verdict, the five headers and the
  rest of the metering step, which every design keeps.
- write_app: one unconditional one-row upsert in the counters' file (SQLite, WAL, autocommit):
  the least an exact count kept in a SQLite file writes for each request.
- round_trip_app: a message to a local process that answers at once over a Unix socket (run
  `python bench/metering_probes.py SOCKET`): the least a host-local metering process costs
  before it counts anything.
- shared_memory_app: a count in a memory-mapped file beside the store, under a lock file:
  the least a counter shared by the host's workers costs without a database.

Each answers as an allowed request with the same headers, so only what it replaces differs.
These are measuring probes, never served by rua.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import selectors
import socket
import sys
import zlib

# Where round_trip_app finds the answering process (not a RUA_* name: rua refuses unknown ones).
SOCKET_ENV = "BENCH_ROUND_TRIP_SOCKET"
SLOTS = 4096                  # shared_memory_app's counts, 8 bytes each
WRITE = ("INSERT INTO bench_probe (key_id, n) VALUES (?1, 1) "
         "ON CONFLICT (key_id) DO UPDATE SET n = n + 1")


def _app_with(admit):
    from store import usage
    from webapp import create_app
    usage.admit = admit
    return create_app()


def _allowed():
    from store.usage import MeterReading
    return MeterReading("allowed", 1, 0)


def constant_app():
    return _app_with(lambda org_id, key_id, now, **_: _allowed())


def write_app():
    from store import meter

    def admit(org_id, key_id, now, **_):
        meter.obj.connection().execute(WRITE, (key_id,))
        return _allowed()
    app = _app_with(admit)
    meter.obj.connection().execute(
        "CREATE TABLE IF NOT EXISTS bench_probe (key_id TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID")
    return app


def round_trip_app():
    path, held = os.environ[SOCKET_ENV], []

    def admit(org_id, key_id, now, **_):
        if not held:
            held.append(socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET))
            held[0].connect(path)
        held[0].send(f"{org_id} {key_id} {now}".encode())
        held[0].recv(64)
        return _allowed()
    return _app_with(admit)


def shared_memory_app():
    from store import meter
    held = []

    def admit(org_id, key_id, now, **_):
        if not held:
            held.append(_mapped(meter.obj.database + ".probe"))    # beside the counters' file
        fd, counts = held[0]
        slot = zlib.crc32(key_id.encode()) % SLOTS * 8
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            count = int.from_bytes(counts[slot:slot + 8], "little") + 1
            counts[slot:slot + 8] = count.to_bytes(8, "little")
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        return _allowed()
    return _app_with(admit)


def _mapped(path: str) -> tuple[int, mmap.mmap]:
    """The shared counts' file, made when missing, and its mapping."""
    with open(path, "ab") as made:
        made.truncate(SLOTS * 8)
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    return fd, mmap.mmap(fd, SLOTS * 8)


def answer_forever(path: str) -> None:
    """The process round_trip_app asks: every message gets a short answer at once."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(128)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    while True:
        for ready, _ in selector.select():
            if ready.fileobj is listener:
                selector.register(listener.accept()[0], selectors.EVENT_READ)
                continue
            message = ready.fileobj.recv(1024)
            if message:
                ready.fileobj.send(b"allowed")
            else:
                selector.unregister(ready.fileobj)
                ready.fileobj.close()


if __name__ == "__main__":
    answer_forever(sys.argv[1])
