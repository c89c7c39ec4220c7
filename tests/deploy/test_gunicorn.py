"""deploy/gunicorn.conf.py under a real gunicorn: settings load, the API answers, it stops."""
from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys

import pytest

from config import Config
from tests.factories import make_key, make_org
from tests.servers import CONF, ROOT, free_port, gunicorn_env, http_get, running_gunicorn

STOP_TIMEOUT = 25          # graceful_timeout (20 s) and a margin


def get(url: str, key: str | None = None) -> tuple[int, bytes]:
    status, _, body = http_get(url, key, timeout=5)
    return status, body


@pytest.fixture
def gunicorn(config, database, tmp_path):
    """A real gunicorn serving the test's store: (base URL, a read key, process, log)."""
    _, key = make_key(make_org(plan="unlimited"))
    log = tmp_path / "gunicorn.log"
    with running_gunicorn(config, log) as (base, process):
        yield base, key, process, log


def check_config(config, **settings) -> subprocess.CompletedProcess:
    """gunicorn --check-config with the repository's configuration and these RUA_* settings."""
    return subprocess.run([sys.executable, "-m", "gunicorn", "--check-config", "-c", str(CONF)],
                          cwd=ROOT, env=gunicorn_env(config, **settings), capture_output=True,
                          text=True, timeout=60)


def test_gunicorn_accepts_the_configuration(config):
    result = check_config(config)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("settings, said", [
    ({"RUA_WORKRES": "4"}, "rua-web: unknown setting RUA_WORKRES: did you mean RUA_WORKERS?"),
    ({"RUA_LOG_FORMAT": "xml"}, "rua-web: RUA_LOG_FORMAT='xml' is not one of text, json"),
    ({"RUA_DATABASE_URL": "postgresql://db/rua?max_connectionz=3"},
     "rua-web: RUA_DATABASE_URL: max_connectionz is not a connection option: "
     "did you mean max_connections?"),
])
def test_a_bad_setting_stops_gunicorn_at_start_up_in_one_line(config, settings, said):
    result = check_config(config, **settings)
    assert result.returncode != 0
    assert result.stderr.strip() == said


def test_real_gunicorn_serves_enums_with_a_key_refuses_without_and_stops_cleanly(gunicorn):
    base, key, process, log = gunicorn
    status, body = get(f"{base}/enums", key)
    assert status == 200 and b'"alert_type"' in body
    status, body = get(f"{base}/enums")
    assert status == 401 and b'"missing_key"' in body

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=STOP_TIMEOUT) == 0
    log = log.read_text()
    assert " INFO rua.request GET /api/v1/enums 200 " in log     # one line per request
    assert " INFO rua.request GET /api/v1/enums 401 " in log
    assert key not in log                                  # and never prints a key
    assert "Traceback" not in log
    assert "Control socket" not in log                    # no socket shared between gunicorns


def test_under_rua_log_format_json_gunicorns_own_lines_are_json_too(config, database, tmp_path):
    _, key = make_key(make_org(plan="unlimited"))
    log = tmp_path / "gunicorn.log"
    with running_gunicorn(config, log, RUA_LOG_FORMAT="json") as (base, process):
        assert get(f"{base}/enums", key)[0] == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=STOP_TIMEOUT) == 0
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    loggers = {line["logger"] for line in lines}
    assert {"gunicorn.error", "rua.request"} <= loggers
    assert any(line["message"].startswith("Booting worker") for line in lines)
    assert len([line for line in lines if line["logger"] == "rua.request"]) == 1   # once only


def test_a_store_left_behind_stops_gunicorn_in_one_line(tmp_path):
    path = tmp_path / "old.db"
    with contextlib.closing(sqlite3.connect(path)) as old, old:   # a store of version 1 only
        old.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                    "description TEXT, applied_at TEXT)")
        old.execute("INSERT INTO schema_version VALUES (1, 'initial schema', '2026-01-01')")
    env = gunicorn_env(Config(database_url=f"sqlite:///{path}", lock_dir=str(tmp_path)),
                       RUA_BIND=f"127.0.0.1:{free_port()}")
    done = subprocess.run([sys.executable, "-m", "gunicorn", "-c", str(CONF)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "rua-web: the store's schema is at version 1 of " in done.stderr
    assert "Traceback" not in done.stderr
