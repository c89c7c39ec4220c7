"""A lock of store/locks.py held by another process, as another host's runner would hold it:
on Postgres from a session of its own, on SQLite through a descriptor of its own."""
from __future__ import annotations

import contextlib
import subprocess
import sys

HOLDER = """
import sys, time
from store import db, locks, open_db
open_db(sys.argv[1])
with db.connection_context(), locks.exclusive(sys.argv[3], sys.argv[2]) as held:
    print("held" if held else "busy", flush=True)
    sys.stdin.read()                # until the test closes it (or kills the process)
"""


@contextlib.contextmanager
def held_elsewhere(config, name: str):
    """The lock `name` held by a child process for the block; yields the process (kill it to
    see the lock go with it)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, config.database_url,
                               config.lock_dir, name], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
