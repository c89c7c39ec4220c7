"""Copies of a stored report, DMARC or TLS: the same content again is a duplicate; other
content under the same key (reporter, report id, domain and period) is a conflicting copy,
kept aside for an operator and applied to no figure, with one conflicting_copy event."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from ingest.model import ReportError
from ingest.printable import report_named
from store import events, report_copies


DUPLICATE, CONFLICTING = "duplicate", "conflicting"


@dataclass(frozen=True)
class Copy:
    """A copy that arrived under the key of a stored report."""
    kind: str                  # dmarc | tlsrpt
    key: str                   # the dedupe key both share
    digest: str                # SHA-256 of the copy's content ("" when not computed)
    org_name: str
    report_id: str
    domain: str                # TLS: its policy domains, comma-separated
    date_begin: int
    date_end: int


def judge(stored_digest: str, digest: str) -> str:
    """What a copy under a stored report's key is: "duplicate" (the same content, or either
    digest unknown: stored before rua kept digests) or "conflicting" (kept aside, the stored
    report standing). The one place for the rule of report authenticity, to come: a copy
    that speaks for its reporter over a stored one that does not replaces it, unless an
    operator's `rua report replace` put the stored one there (a copy kept with reason
    "replaced" under the key)."""
    if not (stored_digest and digest) or stored_digest == digest:
        return DUPLICATE
    return CONFLICTING


def keep_aside(copy: Copy, content: bytes, org_id: str, stored_text: str, link: str,
               now: datetime) -> ReportError:
    """Keep the copy aside (once per content) and raise its conflicting_copy event (once per
    reporter, report id and domain); the refusal saying so and how to resolve it."""
    kept = report_copies.keep(org_id, copy.kind, copy.key, copy.digest, content,
                              org_name=copy.org_name, report_id=copy.report_id,
                              domain=copy.domain, date_begin=copy.date_begin,
                              date_end=copy.date_end, received_at=now)
    fix = (f"if the stored one is the forgery, `rua report replace {kept.id}` puts this copy "
           f"in its place")
    events.raise_event(
        org_id, "conflicting_copy", event_key(copy),
        title=f"Conflicting copy of {report_named(copy.org_name, copy.report_id)}",
        detail=(f"A copy of {stored_text} arrived with other content and was kept aside as "
                f"copy {kept.id}, applied to no figure; {fix} (`rua report copies` lists the "
                f"kept copies)."),
        domain=copy.domain.split(",")[0][:253], link=link, now=now)
    return ReportError(
        f"conflicting copy: {stored_text} is stored with the same reporter, report id, domain "
        f"and period but other content; the stored report is kept unchanged and this copy "
        f"refused, kept aside as copy {kept.id}; {fix}")


def event_key(copy: Copy) -> str:
    """One key per kind, reporter, report id and domain, however many copies or periods."""
    parts = "\x00".join((copy.kind, copy.org_name.strip(), copy.report_id.strip(), copy.domain))
    digest = hashlib.sha256(parts.encode("utf-8", "surrogatepass")).hexdigest()
    return f"conflicting_copy:{digest}"
