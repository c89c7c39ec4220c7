"""Connections to names someone else chose: resolve, judge every address, connect to that very
address, all within one total deadline (connect, TLS, send and read together).

A name is resolved once and its addresses judged (guard/addresses.py); the TCP connection goes
to a judged address, never to the name again, so DNS that answers differently a moment later
(rebinding) cannot slip past the rule. Nothing here follows a redirect: a caller that wanted to
would open a new connection through this module, judged the same way.
"""
from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time

from guard.addresses import allowed


class Unreachable(Exception):
    """No exchange with the host: the message is the detail, for the operator's log only."""


class Refused(Unreachable):
    """An address is not one rua may connect to; nothing was sent to it."""


class Deadline:
    """One total time limit: each socket operation waits at most what is left, and when time is
    up a watchdog shuts the connection, so a peer trickling a byte at a time is cut off too."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.expired = False
        self._ends = time.monotonic() + seconds
        self._watched: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> "Deadline":
        self._timer.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._timer.cancel()
        with self._lock:
            for handle in self._watched:
                handle.close()
            self._watched.clear()

    def left(self) -> float:
        """Seconds left; Unreachable when none are."""
        left = self._ends - time.monotonic()
        if left <= 0 or self.expired:
            raise Unreachable(f"no answer within {self.seconds:g} s")
        return left

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` when time is up. A duplicate handle is kept: the kernel socket it names
        is the one a TLS layer wrapped around `sock` later reads from, handshake included."""
        with self._lock:
            self._watched.append(sock.dup())
            if self.expired:
                self._shut(self._watched[-1])

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for handle in self._watched:
                self._shut(handle)

    @staticmethod
    def _shut(handle: socket.socket) -> None:
        with contextlib.suppress(OSError):
            handle.shutdown(socket.SHUT_RDWR)


def resolve(host: str, port: int) -> list[str]:
    """Every address of `host` from the system's resolver (/etc/hosts included); an address
    stands for itself. Unreachable when the name does not resolve."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Unreachable(f"{host} does not resolve ({exc})") from None
    return list(dict.fromkeys(info[4][0] for info in found))


def open_socket(addresses: list[str], port: int, *, allow_private: bool,
                deadline: Deadline) -> socket.socket:
    """TCP to the first of `addresses` that answers, once every one of them is judged allowed
    (a name with one private address among public ones is refused whole)."""
    if not addresses:
        raise Unreachable("no address to connect to")
    for address in addresses:
        if not allowed(address, allow_private=allow_private):
            raise Refused(f"{address} is not a public address")
    failure: OSError | None = None
    for address in addresses:
        try:
            sock = socket.create_connection((address, port), timeout=deadline.left())
        except OSError as exc:
            failure = exc
            continue
        deadline.watch(sock)
        return sock
    raise Unreachable(f"could not connect to {addresses[0]} port {port}: "
                      f"{failure.strerror or type(failure).__name__}")


def http_connection(scheme: str, host: str, port: int, addresses: list[str], *,
                    allow_private: bool, deadline: Deadline) -> http.client.HTTPConnection:
    """An http.client connection for `host` (Host header, SNI and certificate name) whose TCP
    goes to a judged address among `addresses`; TLS verifies the chain (SSL_CERT_FILE too)."""
    if scheme == "https":
        return _HTTPS(host, port, addresses, allow_private, deadline)
    return _HTTP(host, port, addresses, allow_private, deadline)


class _HTTP(http.client.HTTPConnection):
    def __init__(self, host, port, addresses, allow_private, deadline):
        super().__init__(host, port, timeout=deadline.seconds)
        self._addresses, self._allow_private, self._deadline = addresses, allow_private, deadline

    def connect(self):
        self.sock = open_socket(self._addresses, self.port, allow_private=self._allow_private,
                                deadline=self._deadline)


class _HTTPS(http.client.HTTPSConnection):
    def __init__(self, host, port, addresses, allow_private, deadline):
        super().__init__(host, port, timeout=deadline.seconds,
                         context=ssl.create_default_context())
        self._addresses, self._allow_private, self._deadline = addresses, allow_private, deadline

    def connect(self):
        raw = open_socket(self._addresses, self.port, allow_private=self._allow_private,
                          deadline=self._deadline)
        try:
            self.sock = self._context.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise
