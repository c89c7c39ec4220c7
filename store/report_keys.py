"""What makes two reports the same report: the duplicate key and the content digest."""
from __future__ import annotations

import hashlib
from typing import BinaryIO

CHUNK = 1024 * 1024


def dedupe_key(org_name: str, report_id: str, domain: str, date_begin: int, date_end: int) -> str:
    """A resent report has the same reporter, report id, policy domain and period; the period
    is part of it because reporters (Google, Mimecast) reuse an id across periods."""
    parts = (org_name.strip(), report_id.strip(), domain, str(date_begin), str(date_end))
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def content_digest(stream: BinaryIO) -> str:
    """The SHA-256 of a report's XML, read to its end in chunks."""
    digest = hashlib.sha256()
    for chunk in iter(lambda: stream.read(CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()
