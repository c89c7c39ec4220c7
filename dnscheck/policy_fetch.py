"""One HTTPS GET of an MTA-STS policy: to the address our resolver gave, verified for the name."""
from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
from dataclasses import dataclass

from dnscheck.resolver import gather

PATH = "/.well-known/mta-sts.txt"
MAX_BYTES = 64 * 1024
# Two addresses at most, so an unreachable host costs two timeouts, not one per record.
MAX_ADDRESSES = 2


@dataclass(frozen=True)
class Fetched:
    """What the policy host answered, or `problem` saying why it did not."""

    status: int = 0
    content_type: str = ""
    location: str = ""
    body: bytes = b""
    problem: str = ""
    unknown: bool = False  # DNS could not tell the host's address: nothing was asked


def fetch(lookup, host: str, *, port: int, timeout: float) -> Fetched:
    """GET https://<host>:<port>/.well-known/mta-sts.txt, redirects not followed, body capped."""
    answers = gather({"A": lambda: lookup.query(host, "A"),
                      "AAAA": lambda: lookup.query(host, "AAAA")})
    addresses = [a for answer in answers.values() if answer.found for a in answer.records]
    if not addresses:
        unknown = [answer.why for answer in answers.values() if answer.unknown]
        if unknown:
            return Fetched(unknown=True, problem=f"DNS could not tell the address of {host} "
                                                 f"({unknown[0]})")
        return Fetched(problem=f"{host} has no A or AAAA record")
    fetched = Fetched()
    for address in addresses[:MAX_ADDRESSES]:
        try:
            return _get(host, address, port, timeout)
        except _ConnectFailed as failure:
            fetched = Fetched(problem=f"could not connect to {address} port {port} ({failure})")
    return fetched


def _get(host: str, address: str, port: int, timeout: float) -> Fetched:
    """One exchange, cut off by a watchdog at `timeout` however slowly the server trickles."""
    connection = _PinnedHTTPS(host, address, port, timeout)
    watchdog = threading.Timer(timeout, connection.cut)
    watchdog.start()
    try:
        return _exchange(connection)
    except _TooLarge:
        return Fetched(problem=f"the policy is larger than {MAX_BYTES // 1024} KiB")
    except (OSError, http.client.HTTPException) as failure:
        return Fetched(problem=_failure(failure, connection.cut_off, host, timeout))
    finally:
        watchdog.cancel()
        connection.close()


def _exchange(connection: "_PinnedHTTPS") -> Fetched:
    connection.request("GET", PATH, headers={"Accept": "text/plain",
                                             "User-Agent": "rua-dnscheck"})
    response = connection.getresponse()
    try:
        body = _read_capped(response) if response.status == 200 else b""
    finally:
        response.close()
    if connection.cut_off:  # what came before the cut may be a truncated body
        raise TimeoutError
    return Fetched(status=response.status, content_type=response.getheader("Content-Type", ""),
                   location=response.getheader("Location", ""), body=body)


def _read_capped(response) -> bytes:
    length = response.getheader("Content-Length", "")
    if length.isdigit() and int(length) > MAX_BYTES:
        raise _TooLarge
    body = bytearray()
    while chunk := response.read1(16384):
        body += chunk
        if len(body) > MAX_BYTES:
            raise _TooLarge
    return bytes(body)


def _failure(failure: Exception, cut_off: bool, host: str, timeout: float) -> str:
    if cut_off or isinstance(failure, TimeoutError):
        return f"{host} did not answer within {timeout:g} s"
    if isinstance(failure, ssl.SSLCertVerificationError):
        return f"its certificate is not valid for {host} ({failure.verify_message})"
    if isinstance(failure, ssl.SSLError):
        return f"the TLS handshake with {host} failed ({failure.reason})"
    return f"{host} broke off the HTTPS exchange ({type(failure).__name__})"


class _TooLarge(Exception):
    pass


class _ConnectFailed(Exception):
    pass


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS for `host` (SNI, certificate name, Host header) over TCP to `address`.

    The default context verifies the chain and the name; it honours SSL_CERT_FILE."""

    def __init__(self, host: str, address: str, port: int, timeout: float):
        self._address = address
        self._tls = ssl.create_default_context()
        self._tls_sock = None
        self.cut_off = False
        super().__init__(host, port, timeout=timeout, context=self._tls)

    def cut(self):
        """The watchdog's end of the exchange: a read blocked in the other thread returns."""
        self.cut_off = True
        if self._tls_sock is not None:
            with contextlib.suppress(OSError):
                # The plain socket's shutdown: the TLS object stays with the reading thread.
                socket.socket.shutdown(self._tls_sock, socket.SHUT_RDWR)

    def connect(self):
        try:
            raw = socket.create_connection((self._address, self.port), self.timeout)
        except TimeoutError:
            raise _ConnectFailed("timed out") from None
        except OSError as failure:
            raise _ConnectFailed(failure.strerror or type(failure).__name__) from None
        try:
            self.sock = self._tls_sock = self._tls.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise
        if self.cut_off:
            raise TimeoutError
