"""The deploy files agree with each other and with the code they start."""
from __future__ import annotations

import configparser
import os
import pathlib
import re
import runpy
import shlex

from click.testing import CliRunner

from cli import main

DEPLOY = pathlib.Path(__file__).resolve().parents[2] / "deploy"


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(DEPLOY / name)
    return parser


def gunicorn_settings(monkeypatch) -> dict:
    monkeypatch.delenv("RUA_WORKERS", raising=False)
    return runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))


def seconds(text: str) -> int:
    return int(re.fullmatch(r"(\d+)s?", text.strip()).group(1))


def test_the_web_unit_runs_gunicorn_with_the_repository_configuration():
    command = shlex.split(unit("rua-web.service")["Service"]["ExecStart"])
    assert command[0].endswith("/.venv/bin/gunicorn")
    assert command[command.index("-c") + 1] == "deploy/gunicorn.conf.py"


def test_systemd_waits_longer_than_gunicorns_graceful_timeout(monkeypatch):
    settings = gunicorn_settings(monkeypatch)
    assert seconds(unit("rua-web.service")["Service"]["TimeoutStopSec"]) > settings["graceful_timeout"]


def test_nginx_waits_longer_than_a_gunicorn_worker_may_take(monkeypatch):
    settings = gunicorn_settings(monkeypatch)
    text = (DEPLOY / "nginx.conf.example").read_text()
    read_timeout = seconds(re.search(r"proxy_read_timeout\s+(\w+);", text).group(1))
    upstream = re.search(r"server\s+([\d.]+:\d+);", text).group(1)
    assert read_timeout > settings["timeout"]
    assert upstream == settings["bind"]


def test_the_snapshotter_unit_and_the_crontab_run_existing_rua_commands():
    command = shlex.split(unit("rua-snapshotter.service")["Service"]["ExecStart"])
    cron = re.findall(r"\.venv/bin/rua ([a-z -]+?)\s*>>", (DEPLOY / "crontab.example").read_text())
    assert command[0].endswith("/.venv/bin/rua") and cron
    for args in [command[1:]] + [c.split() for c in cron]:
        result = CliRunner().invoke(main, [*args, "--help"])
        assert result.exit_code == 0, (args, result.output)


def test_workers_default_to_twice_the_cpus_plus_one_and_rua_workers_pins_them(monkeypatch):
    assert gunicorn_settings(monkeypatch)["workers"] == 2 * len(os.sched_getaffinity(0)) + 1
    monkeypatch.setenv("RUA_WORKERS", "3")
    assert runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))["workers"] == 3
