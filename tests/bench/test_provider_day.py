"""bench/provider_day.py for 2 minutes and 4 organizations: what cannot be noise is asserted
(every report once with its totals, no 500, recovery, no job twice at once); the timing
figures are printed."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.postgres_cluster import binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
ASSERTED = ("every report once with its totals", "conflicting copies kept aside",
            "no 500",
            "503 storage_unavailable with Retry-After during the restart",
            "hosts answering and reports stored within 5 s",
            "fetchers and schedulers back at their next work, without a restart",
            "no process exited but the killed", "quotas exact across the hosts",
            "no job twice at once")


def programs_missing() -> str:
    if os.environ.get("RUA_TEST_DATABASE_URL"):
        return "the soak brings its own Postgres cluster: it runs in CI's SQLite pass"
    try:
        binary("initdb")
    except RuntimeError as exc:
        return str(exc)
    if not (shutil.which("dovecot") or pathlib.Path("/usr/sbin/dovecot").exists()):
        return "dovecot is not installed"
    return ""


@pytest.mark.slow
@pytest.mark.skipif(bool(programs_missing()), reason=programs_missing() or "-")
def test_a_short_provider_day_loses_nothing_doubles_nothing_and_recovers(tmp_path):
    figures_file = tmp_path / "figures.json"
    run = subprocess.run([sys.executable, "bench/provider_day.py", "--minutes", "2",
                          "--organizations", "4", "--domains", "5", "--rate", "2",
                          "--read-rate", "10", "--json", str(figures_file)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert figures_file.exists(), run.stdout[-3000:] + run.stderr[-3000:]
    figures = json.loads(figures_file.read_text())
    print("freshness", figures["freshness"], "recovery", figures["recovery"])
    failed = [name for name in ASSERTED if not figures["checks"][name]]
    assert not failed, (failed, run.stdout[-4000:])


@pytest.mark.parametrize("option, value", [("--minutes", "0"), ("--rate", "nan"),
                                           ("--organizations", "2.5"), ("--read-rate", "-1")])
def test_a_count_not_above_zero_is_a_usage_error_before_anything_starts(option, value):
    shown = subprocess.run([sys.executable, str(ROOT / "bench" / "provider_day.py"), option,
                            value], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert shown.returncode == 2
    assert f"argument {option}: '{value}' is not a" in shown.stderr
    assert "above zero" in shown.stderr and shown.stdout == ""
