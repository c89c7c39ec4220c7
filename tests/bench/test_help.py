"""Every bench script explains itself: `--help` prints its whole description (the module's
docstring), not a first line cut mid-sentence, and exits 0 having run nothing."""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(path for path in BENCH.glob("*.py") if "ArgumentParser(" in path.read_text())


def words(text: str) -> str:
    return " ".join(text.split())


def test_every_script_with_options_is_found():
    assert len(SCRIPTS) >= 20 and BENCH / "provider_day.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_help_prints_the_whole_description(script):
    described = ast.get_docstring(ast.parse(script.read_text()))
    shown = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                           text=True, timeout=60, cwd=BENCH.parent)
    assert shown.returncode == 0, shown.stderr
    assert words(described) in words(shown.stdout)
