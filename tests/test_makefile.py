"""`make run` and `make install` as a newcomer meets them: the demo in its own store, on
RUA_BIND, a busy port said before any key is made, and no test tools in a plain install."""
from __future__ import annotations

import contextlib
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys

import pytest

from tests.servers import free_port, http_get, wait_until_listening

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(sys.executable).parent
# The install is the one running these tests: make must not redo it.
MAKE = ["make", "--no-print-directory", "-o", ".venv/.installed", f"BIN={BIN}"]
KEY_LINE = re.compile(r"^Demo API key \(read scope\): (rua_\w+)$")


def make_env(tmp_path, **settings) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_OFFLINE="1", RUA_WORKERS="1", RUA_LOCK_DIR=str(tmp_path / "locks"),
               # The user's own store, which the demo must leave alone.
               RUA_DATABASE_URL=f"sqlite:///{tmp_path / 'mine.db'}", **settings)
    return env


@contextlib.contextmanager
def make_run(tmp_path, port: int):
    """`make run` with a 2-day demo on 127.0.0.1:port: yields (key it printed, its stdout)."""
    demo = f"sqlite:///{tmp_path / 'demo.db'}"
    process = subprocess.Popen(
        [*MAKE, "run", "DEMO_ARGS=--days 2", f"DEMO_DATABASE_URL={demo}"], cwd=ROOT,
        env=make_env(tmp_path, RUA_BIND=f"127.0.0.1:{port}"), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        lines = []
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("  curl "):
                break
        keys = [m.group(1) for m in map(KEY_LINE.match, lines) if m]
        assert len(keys) == 1, lines
        wait_until_listening(process, port, lambda: "\n".join(lines))
        yield keys[0], lines
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
        process.stdout.close()


@pytest.mark.slow
def test_make_run_serves_the_demo_from_its_own_store_on_rua_bind(tmp_path):
    port = free_port()
    with make_run(tmp_path, port) as (key, lines):
        assert f"http://127.0.0.1:{port}/api/v1/reports" in lines[-1]
        assert f"Dashboard: http://127.0.0.1:{port}/ (sign in with the key)" in lines
        status, _, body = http_get(f"http://127.0.0.1:{port}/api/v1/reports", key)
        assert status == 200 and b'"total"' in body
    assert (tmp_path / "demo.db").exists() and not (tmp_path / "mine.db").exists()
    # Again: the first key is revoked, so runs never pile up keys that work for ever.
    with make_run(tmp_path, port) as (second, lines):
        assert "revoked 1 earlier demo key(s)" in lines
        assert http_get(f"http://127.0.0.1:{port}/api/v1/reports", key)[0] == 401
        assert http_get(f"http://127.0.0.1:{port}/api/v1/reports", second)[0] == 200


def test_a_busy_port_stops_make_run_before_any_key_is_made(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = subprocess.run([*MAKE, "run", f"DEMO_DATABASE_URL=sqlite:///{tmp_path / 'demo.db'}"],
                             cwd=ROOT, env=make_env(tmp_path, RUA_BIND=f"127.0.0.1:{port}"),
                             capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert f"make: cannot listen on 127.0.0.1:{port}" in run.stderr
    assert "Demo API key" not in run.stdout and not (tmp_path / "demo.db").exists()


def test_a_busy_port_stops_make_serve_before_the_store_is_made(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        serve = subprocess.run([*MAKE, "serve"], cwd=ROOT,
                               env=make_env(tmp_path, RUA_BIND=f"127.0.0.1:{port}"),
                               capture_output=True, text=True, timeout=120)
    assert serve.returncode != 0
    assert f"make: cannot listen on 127.0.0.1:{port}" in serve.stderr
    assert not (tmp_path / "mine.db").exists()


def test_a_plain_install_has_no_test_tools_and_make_test_adds_them():
    def planned(target: str) -> str:
        # -n: print the commands; -W: as if setup.cfg had just changed.
        return subprocess.run(["make", "-n", "-W", "setup.cfg", target], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, check=True).stdout
    install, test = planned("install"), planned("test")
    assert "pip install --quiet -e .\n" in install and ".[test]" not in install
    assert "pip install --quiet -e '.[test]'" in test
