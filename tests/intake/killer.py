"""`rua ARGS…` in a child process that dies by SIGKILL as soon as it spills a decompressed
attachment to disk (ingest/archives.spool past 4 MiB), as a process killed mid-message would."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

from tests.ingest import xmlbuild

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHILD = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[1])

def die_on_spill(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].endswith(".part"):
        os.kill(os.getpid(), signal.SIGKILL)

sys.addaudithook(die_on_spill)
from cli import main
main(sys.argv[2:], prog_name="rua")
"""


def killing_mail() -> bytes:
    """A report whose XML is 5 MB once decompressed (padding), small as a gzip attachment."""
    xml = xmlbuild.report_bytes(report_id="killer", after=" " * (5 << 20))
    return xmlbuild.mail({"killer.xml.gz": (xmlbuild.gzipped(xml), "application/gzip")})


def run_killed(config, *args) -> subprocess.CompletedProcess:
    """Run rua in the child against the test's store and lock folder, and wait for it."""
    env = {**os.environ, "RUA_DATABASE_URL": config.database_url, "RUA_LOCK_DIR": config.lock_dir}
    return subprocess.run([sys.executable, "-c", CHILD, str(ROOT), *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=120)
