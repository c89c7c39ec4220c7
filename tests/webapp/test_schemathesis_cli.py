"""schemathesis's own CLI against a real gunicorn on the demo store, as a client's test would run
it: `st run {base}/openapi.json --checks all`. Every check must pass, negative_data_rejection
included: a request the document calls invalid must be one the server refuses. The stateful
phase is left out: it sends path values it made up (a 29-digit report id) as if a link supplied
them and counts the 400 invalid_id as a valid request rejected."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from tests.demo_api import demo_keys, served_demo, unmetered_demo

ROOT = pathlib.Path(__file__).resolve().parents[2]
ST = pathlib.Path(sys.executable).with_name("st")
KEYS = 60          # requests spread over this many keys stay under the abuse limit of each


@pytest.mark.slow
def test_st_run_checks_all_passes_against_gunicorn_on_the_demo_store(rua, config, tmp_path):
    keys = demo_keys(rua, KEYS)
    unmetered_demo()
    with served_demo(config, tmp_path) as base:
        env = {**os.environ, "RUA_ST_KEYS": " ".join(keys),
               "SCHEMATHESIS_HOOKS": "tests.webapp.st_keys_hook", "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [str(ST), "run", f"{base}/openapi.json", "--url", base, "--checks", "all",
             "--max-examples", "25", "--phases", "examples,coverage,fuzzing",
             "--generation-deterministic", "--workers", "2", "--max-failures", "20",
             "--report-dir", str(tmp_path / "st")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-12000:]
    assert "Rate limited" not in out, out[-4000:]
