"""One HTTPS GET of an MTA-STS policy: to an address our resolver gave, judged by the outbound
rule (guard/), verified for the name, within one total deadline.

The policy host's name comes from a report (anyone can mail one), so whatever went wrong on the
network is stored as one sentence that names no address, port or failure: otherwise the
domain's health and its events would read back which ports answer inside rua's network.
"""
from __future__ import annotations

import http.client
import logging
import ssl
from dataclasses import dataclass

from dnscheck.resolver import gather
from guard.connect import Deadline, Unreachable, http_connection

PATH = "/.well-known/mta-sts.txt"
MAX_BYTES = 64 * 1024
# Two addresses at most, so an unreachable host costs two connect attempts, not one per record.
MAX_ADDRESSES = 2
NOT_REACHED = "its host could not be reached over HTTPS"
log = logging.getLogger("rua.dnscheck")


@dataclass(frozen=True)
class Fetched:
    """What the policy host answered, or `problem` saying why it did not."""

    status: int = 0
    content_type: str = ""
    location: str = ""
    body: bytes = b""
    problem: str = ""
    unknown: bool = False  # DNS could not tell the host's address: nothing was asked


def fetch(lookup, host: str, *, port: int, timeout: float,
          allow_private: bool = False) -> Fetched:
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
    with Deadline(timeout) as deadline:
        connection = http_connection("https", host, port, addresses[:MAX_ADDRESSES],
                                     allow_private=allow_private, deadline=deadline)
        try:
            return _exchange(connection, deadline)
        except _TooLarge:
            return Fetched(problem=f"the policy is larger than {MAX_BYTES // 1024} KiB")
        except ssl.SSLCertVerificationError as failure:
            return Fetched(problem=f"its certificate is not valid for {host} "
                                   f"({failure.verify_message})")
        except (Unreachable, OSError, http.client.HTTPException) as failure:
            log.info("MTA-STS policy of %s not fetched: %s", host, _detail(failure, deadline))
            return Fetched(problem=NOT_REACHED)
        finally:
            connection.close()


def _exchange(connection: http.client.HTTPSConnection, deadline: Deadline) -> Fetched:
    connection.request("GET", PATH, headers={"Accept": "text/plain",
                                             "User-Agent": "rua-dnscheck"})
    response = connection.getresponse()
    try:
        body = _read_capped(response) if response.status == 200 else b""
    finally:
        response.close()
    if deadline.expired:  # what came before the cut may be a truncated body
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


def _detail(failure: Exception, deadline: Deadline) -> str:
    """What happened, for the operator's log (never stored or shown)."""
    if deadline.expired:
        return f"no answer within {deadline.seconds:g} s"
    return str(failure) or type(failure).__name__


class _TooLarge(Exception):
    pass
