"""Real servers for the tests: a gunicorn over the test's store (deploy/gunicorn.conf.py), and
small TCP servers on 127.0.0.1 that tests build their own protocols on."""
from __future__ import annotations

import contextlib
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONF = ROOT / "deploy" / "gunicorn.conf.py"
START_TIMEOUT = 30


class TcpServer:
    """A TCP server on a free port of 127.0.0.1 between start() and stop(): each connection is
    served by serve(connection) on a thread of its own."""

    def __init__(self):
        self._stopped = threading.Event()
        self._sock = socket.socket()

    @property
    def port(self) -> int:
        return self._sock.getsockname()[1]

    def start(self):
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._sock.close()

    def serve(self, connection: socket.socket) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()


def children(parent: int) -> list[int]:
    """The ids of the processes whose parent is `parent` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stream:
                fields = stream.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(entry))
    return found


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def listening(address: str):
    """A TCP socket listening on `address` (a free port) that never answers: with arrived(),
    a test tells whether anything tried to connect, without waiting on a clock."""
    with socket.socket() as sock:
        sock.bind((address, 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def arrived(sock: socket.socket) -> bool:
    """Whether a connection is waiting on a listening() socket (taken and closed if so)."""
    try:
        connection, _ = sock.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


def gunicorn_env(config, **extra) -> dict:
    """The environment less every RUA_* name, then the test's store and these settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=config.database_url, RUA_OFFLINE="1", RUA_WORKERS="1",
               RUA_LOCK_DIR=config.lock_dir)
    env.update(extra)
    return env


def wait_until_listening(process, port: int, output, name: str = "gunicorn",
                         host: str = "127.0.0.1") -> None:
    """Until `process` accepts connections on host:port; `output()` explains an early exit."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{name} exited with {process.returncode}: {output()}")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{name} did not start listening in time")


@contextlib.contextmanager
def running_gunicorn(config, log: pathlib.Path, *args: str, **settings: str):
    """gunicorn on a free port until the block ends: yields (API base URL, process). The test
    binds the socket and hands it over (fd://), so no other process can take the port between
    finding it free and gunicorn listening on it (as when two suites run side by side)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    env = gunicorn_env(config, RUA_BIND=f"fd://{listener.fileno()}", **settings)
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(CONF), *args],
                                   cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   pass_fds=(listener.fileno(),))
    listener.close()
    try:
        wait_until_listening(process, port, log.read_text)
        yield f"http://127.0.0.1:{port}/api/v1", process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


@contextlib.contextmanager
def quiet_gunicorn(config, tmp_path: pathlib.Path, workers: int = 4):
    """Several workers, no access log; yields the base URL and fails on any traceback logged."""
    log = tmp_path / "gunicorn.log"
    with running_gunicorn(config, log, "--access-logfile", "/dev/null",
                          RUA_WORKERS=str(workers), RUA_LOG_LEVEL="warning") as (base, _):
        yield base
        assert "Traceback" not in log.read_text()


def http_get(url: str, key: str | None = None, timeout: float = 20, **headers):
    """(status, headers, body bytes) of a GET, error statuses included."""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
