"""The README's curl lines, run with curl against gunicorn on the demo store: each answers 200
with the top-level fields the document's example of that operation has, so they cannot rot."""
from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import pathlib
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from tests.demo_api import demo_keys, served_demo
from tests.servers import free_port
from tests.test_contract import DOC

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
ORIGINS = ("http://127.0.0.1:8000", "https://reports.example.net")
KEY = re.compile(r"\$KEY|rua_[0-9A-Z]+…?")
CURL = shutil.which("curl")


def readme_curl_lines() -> list[str]:
    return [line.strip() for line in README.read_text(encoding="utf-8").splitlines()
            if line.strip().startswith("curl ")]


def expected_fields(url: str) -> set[str]:
    """Top-level fields of the documented example of the operation url names."""
    path = urlsplit(url).path
    if path == "/.well-known/api-catalog":
        return {"linkset"}
    path = path.removeprefix("/api/v1")
    for pattern, item in DOC["paths"].items():
        if re.fullmatch(re.sub(r"{\w+}", r"[^/]+", pattern), path):
            return set(item["get"]["responses"]["200"]["content"]["application/json"]["example"])
    raise AssertionError(f"{url}: no documented operation")


def test_the_readme_has_curl_lines_for_this_test():
    assert len(readme_curl_lines()) >= 5


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
@pytest.mark.slow
def test_every_readme_curl_line_answers_as_documented(rua, config, tmp_path):
    key = demo_keys(rua)[0]
    with served_demo(config, tmp_path) as base:
        origin = base.removesuffix("/api/v1")
        for number, line in enumerate(readme_curl_lines()):
            args = shlex.split(KEY.sub(key, line))
            url = next(arg for arg in args if arg.startswith(ORIGINS))
            here = origin + url[len(next(o for o in ORIGINS if url.startswith(o))):]
            args = [here if arg == url else arg for arg in args[1:]]
            folder = tmp_path / f"curl-{number}"
            folder.mkdir()
            saves = any(arg.startswith("-") and "O" in arg for arg in args)
            extra = [] if saves else ["-o", "answer"]
            run = subprocess.run([CURL, "-sS", "-w", "%{http_code}", *extra, *args], cwd=folder,
                                 capture_output=True, text=True, timeout=60)
            assert run.returncode == 0 and run.stdout == "200", (line, run.stdout, run.stderr)
            files = list(folder.iterdir())
            assert len(files) == 1, line
            if saves:       # -OJ: the attachment under the name the server gave it
                assert files[0].name.endswith(".csv") and files[0].read_text().count("\n") >= 1
                continue
            assert set(json.loads(files[0].read_text())) == expected_fields(url), line


# --- the newcomer's walk: the README's blocks of commands, run by bash as written -------------

BIN = pathlib.Path(sys.executable).parent
ROOT = README.parent
# The install is the one running these tests: make must not redo it (setup.cfg may be newer).
MAKE = f"make -o .venv/.installed BIN={BIN}"


def readme_block(containing: str) -> list[str]:
    """The lines of the README's indented block of commands that holds `containing`."""
    blocks, current = [], []
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("    "):
            current.append(line[4:])
        elif current and line.strip():
            blocks.append(current)
            current = []
    blocks.append(current)
    [block] = [b for b in blocks if any(containing in line for line in b)]
    return [line for line in block if line.strip()]


def as_script(lines: list[str], port: int, folder: pathlib.Path) -> str:
    """The block for bash: the venv of these tests, the test's port, `make serve` started in
    the background (the README's other terminal, its output in folder) and waited for."""
    script = ["set -euo pipefail"]
    for line in lines:
        line = line.replace(".venv/bin/", f"{BIN}/").replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        if line.startswith("make serve"):
            log = shlex.quote(str(folder / "serve.log"))
            script += [f"{MAKE} serve >{log} 2>&1 &",
                       "for _ in $(seq 300); do",
                       f"  (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break",
                       f"  kill -0 $! 2>/dev/null || {{ cat {log} >&2; exit 1; }}",
                       "  sleep 0.1", "done"]
        else:
            script.append(line)
    return "\n".join(script) + "\n"


def run_script(script: str, env: dict) -> subprocess.CompletedProcess:
    """bash in its own process group, every process of which (make serve's gunicorn) ends after."""
    process = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=240)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def clean_env(**settings: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUA_", "PG"))}
    env.update(RUA_OFFLINE="1", RUA_WORKERS="1", **settings)
    return env


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
@pytest.mark.slow
def test_the_first_organization_block_serves_its_key_with_make_serve(config, tmp_path):
    lines = readme_block("rua org create \"Example Inc\" --plan team")
    assert lines[0] == ". .venv/bin/activate" and any(line.startswith("make serve") for line in lines)
    port = free_port()
    env = clean_env(RUA_DATABASE_URL=f"sqlite:///{tmp_path / 'own.db'}",
                    RUA_LOCK_DIR=str(tmp_path / "locks"), RUA_BIND=f"127.0.0.1:{port}")
    run = run_script(as_script(lines, port, tmp_path), env)
    assert run.returncode == 0, (run.stdout, run.stderr)
    answer = json.loads(run.stdout.splitlines()[-1])      # the curl's body: the store it filled
    assert [d["domain"] for d in answer["domains"]] == ["example.com"]


def postgres_answers() -> bool:
    if shutil.which("psql") is None:
        return False
    probe = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-w", "-tAc", "SELECT 1"],
                           capture_output=True, text=True, env=clean_env(), timeout=30)
    return probe.returncode == 0


@pytest.mark.slow
def test_the_postgres_block_makes_a_store_its_own_role_can_use(tmp_path):
    if not postgres_answers():
        pytest.skip("no Postgres answers on 127.0.0.1:5432 as postgres without a password")
    lines = readme_block("CREATE ROLE")
    # The extra is installed with the tests' venv already; its one package must be there.
    [install] = [line for line in lines if "pip install" in line]
    assert "'.[postgres]'" in install and importlib.util.find_spec("psycopg2") is not None
    name = f"rua_readme_{secrets.token_hex(4)}"
    script = [re.sub(r"\brua_user\b", f"{name}_user", line) for line in lines
              if line != install]
    script = [re.sub(r"(5432/| )rua$", rf"\g<1>{name}", line) for line in script]
    assert sum(line.count(name) for line in script) == 5, script     # role twice, db thrice
    env = clean_env(RUA_LOCK_DIR=str(tmp_path / "locks"))
    try:
        run = run_script(as_script(script + [".venv/bin/rua org create Acme"], free_port(),
                                   tmp_path), env)
        assert run.returncode == 0, (run.stdout, run.stderr)
        assert "schema version" in run.stdout and "SQLite" not in run.stdout
    finally:
        for sql in (f'DROP DATABASE IF EXISTS "{name}"', f'DROP ROLE IF EXISTS "{name}_user"'):
            subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-w", "-c", sql],
                           capture_output=True, env=clean_env(), timeout=60)


# --- the command table: every command it names exists, with every option it shows ------------

def readme_commands() -> list[str]:
    """Each `rua …` of the README's command table, as written (a row may hold several)."""
    rows = [line for line in README.read_text(encoding="utf-8").splitlines()
            if line.startswith("| `rua ")]
    return [code for row in rows for code in re.findall(r"`(rua [^`]+)`", row.split(" | ")[0])]


def test_every_command_of_the_readme_table_has_the_options_it_shows():
    from click.testing import CliRunner

    from cli import main
    commands = readme_commands()
    assert "rua export" in " ".join(commands)
    for command in commands:
        words = command.split()[1:]
        path = list(itertools.takewhile(lambda word: re.fullmatch(r"[a-z]+", word), words))
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (command, result.output)
        missing = [option for option in re.findall(r"--[a-z-]+", command)
                   if option not in result.output]
        assert missing == [], command
