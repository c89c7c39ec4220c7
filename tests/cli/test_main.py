"""`rua` imports what a command needs when it runs: the help alone loads none of the heavy parts."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.servers import ROOT

# Libraries and rua modules that only some commands need; `rua --help` must load none of them.
HEAVY_PACKAGES = {"lxml", "dns", "geoip2fast", "maxminddb", "flask", "werkzeug", "apscheduler",
                  "standardwebhooks", "cryptography", "publicsuffixlist", "imapclient"}
HEAVY_MODULES = {"store.models", "ingest.pipeline", "notify.webhook", "notify.drain",
                 "demo.reports", "snapshotter.jobs", "jobs.scheduler", "jobs.table", "sources.jobs",
                 "dnscheck.jobs"}

LOADED_AFTER = """
import json, sys
from cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_by(*args) -> set[str]:
    """The modules a fresh interpreter holds after `rua ARGS…`."""
    done = subprocess.run([sys.executable, "-c", LOADED_AFTER, *args], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return set(json.loads(done.stderr.splitlines()[-1]))


def heavy(modules: set[str]) -> set[str]:
    return {name for name in modules
            if name in HEAVY_MODULES or name.split(".")[0] in HEAVY_PACKAGES}


def test_the_help_loads_none_of_the_heavy_modules():
    assert heavy(loaded_by("--help")) == set()


def test_a_command_s_own_help_loads_none_of_them_either():
    assert heavy(loaded_by("ingest", "--help")) == set()


def test_a_command_imports_its_part_when_it_runs(tmp_path):
    # `rua demo --records` writes a report with the demo generator, imported when it runs.
    loaded = loaded_by("demo", "--records", "1", "--output", str(tmp_path / "one.xml"))
    assert "demo.reports" in loaded
