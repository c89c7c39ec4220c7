"""What makes two reports the same report: the duplicate key and the content digest."""
from __future__ import annotations

import hashlib
from typing import BinaryIO

CHUNK = 1024 * 1024
WHITESPACE = b" \t\r\n"


def dedupe_key(org_name: str, report_id: str, domain: str, date_begin: int, date_end: int) -> str:
    """A resent report has the same reporter, report id, policy domain and period; the period
    is part of it because reporters (Google, Mimecast) reuse an id across periods."""
    return _key(org_name.strip(), report_id.strip(), domain, str(date_begin), str(date_end))


def tls_dedupe_key(org_name: str, report_id: str, date_begin: int, date_end: int) -> str:
    """A resent TLS report has the same reporter, report-id and period."""
    return _key(org_name.strip(), report_id.strip(), str(date_begin), str(date_end))


def _key(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def content_digest(stream: BinaryIO) -> str:
    """The SHA-256 of a report's XML without its whitespace, read to its end in chunks: a copy
    re-indented, trimmed or with other line ends on the way (a text/xml attachment) is the same."""
    digest = hashlib.sha256()
    for chunk in iter(lambda: stream.read(CHUNK), b""):
        digest.update(chunk.translate(None, WHITESPACE))
    return digest.hexdigest()
