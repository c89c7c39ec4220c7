"""The systemd units: each passes `systemd-analyze verify`, is hardened, and its command runs.

Without systemd as PID 1 a unit cannot be started here, so each ExecStart is run as systemd
would run it (its Environment=, its working directory, /opt/rua read as this checkout, the
state directory as a throwaway folder) and must come up, do its job and stop on KillSignal.
"""
from __future__ import annotations

import configparser
import contextlib
import os
import pathlib
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import time

import pytest

from store.models import Report
from tests.intake.conftest import imap_server  # noqa: F401 (a fixture)
from tests.intake.conftest import Box, make_maildir, report_mail
from tests.servers import free_port, http_get

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
UNITS = sorted(p.name for p in DEPLOY.glob("*.service"))
STATE = "/var/lib/rua"


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(DEPLOY / name)
    return parser


def installed_here(name: str, folder: pathlib.Path) -> pathlib.Path:
    """The unit with /opt/rua read as this checkout (where systemd-analyze finds ExecStart)."""
    target = folder / name
    target.write_text((DEPLOY / name).read_text().replace("/opt/rua", str(ROOT)))
    return target


def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd)")
    return found


def test_there_is_one_unit_per_process():
    assert UNITS == ["rua-fetch.service", "rua-snapshotter.service", "rua-web.service"]


@pytest.mark.parametrize("name", UNITS)
def test_systemd_analyze_verify_finds_nothing_to_say(name, tmp_path):
    path = installed_here(name, tmp_path)
    result = subprocess.run([systemd_analyze(), "verify", str(path)], capture_output=True,
                            text=True, timeout=60)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@pytest.mark.parametrize("name", UNITS)
def test_each_unit_is_hardened_and_keeps_its_data_in_the_state_directory(name, tmp_path):
    service = unit(name)["Service"]
    assert service["ProtectSystem"] == "strict" and service["NoNewPrivileges"] == "yes"
    assert service["StateDirectory"] == "rua" and service["UMask"] == "0077"
    assert service["User"] == "rua" and "ReadWritePaths" not in service
    environment = dict(item.split("=", 1) for item in shlex.split(service["Environment"]))
    assert environment == {"RUA_DATABASE_URL": f"sqlite:///{STATE}/rua.db", "RUA_LOCK_DIR": STATE}
    result = subprocess.run([systemd_analyze(), "security", "--offline=true",
                             str(installed_here(name, tmp_path))],
                            capture_output=True, text=True, timeout=60)
    found = re.search(r"Overall exposure level for \S+: ([\d.]+) (\w+)", result.stdout)
    if result.returncode != 0 and found is None:
        pytest.skip(f"systemd-analyze security --offline is not supported: {result.stderr}")
    assert float(found.group(1)) <= 4.0, result.stdout     # "OK" or better


def command_env(name: str, state: pathlib.Path, **settings) -> tuple[list[str], dict]:
    """The unit's command line and environment as systemd builds them, rua.env's settings last
    (start it with launch() or run(), which apply the unit's UMask= as systemd does)."""
    service = unit(name)["Service"]
    command = shlex.split(service["ExecStart"].replace("/opt/rua", str(ROOT)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    for item in shlex.split(service["Environment"]):
        key, value = item.split("=", 1)
        env[key] = value.replace(STATE, str(state))
    env.update(settings)
    return command, env


@pytest.fixture
def state(tmp_path):
    """The state directory systemd would make, with a store `rua init` brought up."""
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    command, env = command_env("rua-snapshotter.service", folder)
    run("rua-snapshotter.service", [command[0], "init"], env)
    return folder


def umask(name: str) -> int:
    return int(unit(name)["Service"]["UMask"], 8)


def run(name: str, command: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=env, check=True, capture_output=True, timeout=60,
                          umask=umask(name))


def launch(name: str, command: list[str], env: dict, log: pathlib.Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, umask=umask(name))


def stop(process: subprocess.Popen, name: str) -> int:
    """KillSignal, then wait no longer than the unit's TimeoutStopSec."""
    service = unit(name)["Service"]
    process.send_signal(getattr(signal, service.get("KillSignal", "SIGTERM")))
    return process.wait(timeout=int(service["TimeoutStopSec"]))


def test_the_web_unit_notifies_systemd_when_ready_and_serves(state, tmp_path):
    port, name = free_port(), "rua-web.service"
    command, env = command_env(name, state, RUA_BIND=f"127.0.0.1:{port}",
                               RUA_WORKERS="1")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(30)
    env["NOTIFY_SOCKET"] = str(tmp_path / "notify")        # what Type=notify provides
    process = launch(name, command, env, tmp_path / "web.log")
    try:
        assert b"READY=1" in notify.recv(4096)
        status, _, _ = http_get(f"http://127.0.0.1:{port}/api/v1/openapi.json", timeout=10)
        assert status == 200
        assert stop(process, name) == 0
    finally:
        notify.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in (tmp_path / "web.log").read_text()
    assert oct((state / "rua.db").stat().st_mode & 0o777) == "0o600"    # UMask=0077


def test_the_scheduler_unit_fetches_the_maildir_and_stops_on_its_kill_signal(state, tmp_path):
    maildir = make_maildir(tmp_path / "Maildir")
    (maildir / "new" / "1.a.host").write_bytes(report_mail("r-1"))
    name = "rua-snapshotter.service"
    command, env = command_env(name, state, RUA_MAILDIR=str(maildir),
                               RUA_OFFLINE="1")
    rua = command[0]
    for setup in (["org", "create", "Acme"], ["domain", "add", "Acme", "example.com"]):
        run(name, [rua, *setup], env)
    process = launch(name, command, env, tmp_path / "scheduler.log")
    try:
        assert wait_for(lambda: os.listdir(maildir / "cur") == ["1.a.host:2,S"]), \
            (tmp_path / "scheduler.log").read_text()
        assert stop(process, name) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = (tmp_path / "scheduler.log").read_text()
    assert "fetch" in re.search(r"scheduler started: (.*)", text).group(1)
    assert "Traceback" not in text
    assert stored_report_ids(state) == ["r-1"]


def stored_report_ids(state: pathlib.Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(state / "rua.db")) as connection:
        rows = connection.execute(f'SELECT report_id FROM "{Report._meta.table_name}"')
        return sorted(row[0] for row in rows)


def test_the_fetch_unit_watches_the_mailbox(state, tmp_path, imap_server,  # noqa: F811
                                            monkeypatch):
    box = Box(imap_server, monkeypatch, tmp_path)
    name = "rua-fetch.service"
    command, env = command_env(name, state, RUA_OFFLINE="1", **box.settings)
    rua = command[0]
    for setup in (["org", "create", "Acme"], ["domain", "add", "Acme", "example.com"]):
        run(name, [rua, *setup], env)
    process = launch(name, command, env, tmp_path / "fetch.log")
    try:
        box.append(report_mail("r-1"))
        assert wait_for(lambda: box.subjects(box.done) == ["Report r-1"]), \
            (tmp_path / "fetch.log").read_text()
        assert stop(process, name) in (0, -signal.SIGTERM)   # both clean
        assert stored_report_ids(state) == ["r-1"]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in (tmp_path / "fetch.log").read_text()


def wait_for(condition, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False
