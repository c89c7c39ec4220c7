"""deploy/gunicorn.conf.py under a real gunicorn: the settings load, the API answers, it stops cleanly."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.factories import make_key, make_org
from tests.servers import CONF, ROOT, free_port, gunicorn_env, http_get, wait_until_listening

STOP_TIMEOUT = 25          # graceful_timeout (20 s) and a margin


def get(url: str, key: str | None = None) -> tuple[int, bytes]:
    status, _, body = http_get(url, key, timeout=5)
    return status, body


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
