"""Say whether RUA_BIND's address is free, before `make run` or `make serve` starts anything.

Prints the API's base address (http://HOST:PORT/api/v1) and exits 0 when gunicorn could listen
there; one line on stderr and exit 1 when something already does (usually an earlier `make run`).
"""
from __future__ import annotations

import os
import socket
import sys

from config import Config, ConfigError


def address(bind: str) -> tuple[str, int]:
    """(host, port) of a gunicorn bind of the form HOST:PORT or [IPv6]:PORT."""
    host, _, port = bind.rpartition(":")
    return host.strip("[]") or "0.0.0.0", int(port)


def taken(host: str, port: int) -> str:
    """Why nothing can listen on host:port, or "" when something can."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As gunicorn does: a port in TIME_WAIT from a server just stopped is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return ""


def main() -> int:
    try:
        bind = Config.from_env(os.environ).bind
    except ConfigError as exc:
        print(f"make: {exc}", file=sys.stderr)
        return 1
    if bind.startswith("unix:"):
        print(f"http://{bind}/api/v1")
        return 0
    try:
        host, port = address(bind)
    except ValueError:
        print(f"make: RUA_BIND={bind!r} is not HOST:PORT", file=sys.stderr)
        return 1
    why = taken(host, port)
    if why:
        print(f"make: cannot listen on {bind} ({why}): stop what runs there (an earlier "
              f"`make run`?) or set RUA_BIND, e.g. RUA_BIND=127.0.0.1:{port + 1}", file=sys.stderr)
        return 1
    print(f"http://{bind}/api/v1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
