"""deploy/gunicorn.conf.py under a real gunicorn: the settings load, the API answers, it stops cleanly."""
from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.factories import make_key, make_org

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "gunicorn.conf.py"
START_TIMEOUT = 20
STOP_TIMEOUT = 25          # graceful_timeout (20 s) and a margin


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gunicorn_env(config, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=config.database_url, RUA_OFFLINE="1", RUA_WORKERS="1",
               RUA_LOCK_DIR=config.lock_dir, **extra)
    return env


def get(url: str, key: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_until_listening(process, port: int, log: pathlib.Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"gunicorn exited with {process.returncode}: {log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("gunicorn did not start listening in time")


@pytest.fixture
def gunicorn(config, database, tmp_path):
    """A real gunicorn on a free port serving the test's store: (base URL, a read key, process, log)."""
    org = make_org(plan="unlimited")
    _, key = make_key(org)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(CONF)], cwd=ROOT,
                                   env=gunicorn_env(config, RUA_BIND=f"127.0.0.1:{port}"),
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_listening(process, port, log)
        yield f"http://127.0.0.1:{port}/api/v1", key, process, log
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_gunicorn_accepts_the_configuration(config):
    result = subprocess.run([sys.executable, "-m", "gunicorn", "--check-config", "-c", str(CONF)],
                            cwd=ROOT, env=gunicorn_env(config), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr


def test_an_unknown_rua_setting_stops_gunicorn_at_start_up(config):
    result = subprocess.run([sys.executable, "-m", "gunicorn", "--check-config", "-c", str(CONF)],
                            cwd=ROOT, env=gunicorn_env(config, RUA_WORKRES="4"),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "RUA_WORKRES" in result.stderr


def test_real_gunicorn_serves_enums_with_a_key_refuses_without_and_stops_cleanly(gunicorn):
    base, key, process, log = gunicorn
    status, body = get(f"{base}/enums", key)
    assert status == 200 and b'"alert_type"' in body
    status, body = get(f"{base}/enums")
    assert status == 401 and b'"missing_key"' in body

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=STOP_TIMEOUT) == 0
    log = log.read_text()
    assert '"GET /api/v1/enums HTTP/1.1" 200' in log       # the access log goes to stdout
    assert key not in log                                  # and never prints a key
    assert "Traceback" not in log
    assert "Control socket" not in log                    # no socket shared between gunicorns
