"""Copies of a stored report, DMARC or TLS: the same content again is a duplicate; other
content under the same key (reporter, report id, domain and period) is a conflicting copy,
kept aside for an operator and applied to no figure, with one conflicting_copy event; unless
it speaks for its reporter (rules/authenticity.py) where the stored one does not: then it
takes the stored one's place."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from ingest import authenticity
from ingest.model import ReportError
from ingest.printable import bounded, report_named
from store import db, events, report_copies


DUPLICATE, CONFLICTING, TAKES_PLACE = "duplicate", "conflicting", "takes_place"
_PATHS = {"dmarc": "/reports", "tlsrpt": "/tls-reports"}


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


def judge(stored_digest: str, digest: str, *, speaks: bool = False,
          stored_speaks: bool = False, chosen: Callable[[], bool] = lambda: False) -> str:
    """What a copy under a stored report's key is: "duplicate" (the same content, or either
    digest unknown: a stored row without one), "takes_place" (it speaks for its
    reporter and the stored one does not, and no operator's `rua report replace` chose the
    stored one: chosen() says, asked only then) or "conflicting" (kept aside, the stored
    report standing). No other copy replaces anything by itself."""
    if not (stored_digest and digest) or stored_digest == digest:
        return DUPLICATE
    if speaks and not stored_speaks and not chosen():
        return TAKES_PLACE
    return CONFLICTING


def keep_aside(copy: Copy, content: bytes, org_id: str, stored_text: str, link: str,
               now: datetime, attested: dict | None = None) -> ReportError:
    """Keep the copy aside (once per content) and raise its conflicting_copy event (once per
    reporter, report id and domain); the refusal saying so and how to resolve it.
    attested: what the copy's mail proves (ingest/authenticity.py's columns)."""
    kept = _keep(copy, content, org_id, now, attested)
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


def take_place(copy: Copy, content: bytes, org_id: str, stored_text: str, signed_by: str,
               now: datetime, attested: dict, max_records: int | None = None) -> str:
    """Put a copy that speaks for its reporter in place of the stored report, which does not
    (`rua report replace`'s swap: every figure recomputed, the stored one kept aside), and
    say why in the conflicting_copy event; the id of the report stored from the copy."""
    from ingest import replacing     # it stores through storing, which judges through here
    kept = _keep(copy, content, org_id, now, attested)
    swap = replacing.replace(kept.id, apply=True, max_records=max_records)
    events.raise_event(
        org_id, "conflicting_copy", f"{event_key(copy)}:took_place",
        title=f"Copy of {bounded(copy.org_name)} report {bounded(copy.report_id)} signed by "
              f"its reporter took the place of the stored one",
        detail=(f"A copy of {stored_text} arrived signed by {bounded(signed_by)}, the domain "
                f"of the reporter's contact address (it speaks for its reporter), where the "
                f"stored one does not: it took its place, every figure recomputed. The stored "
                f"one is kept as copy {swap.kept_id}; `rua report replace {swap.kept_id}` puts "
                f"it back, and then stays."),
        domain=copy.domain.split(",")[0][:253], link=f"{_PATHS[copy.kind]}/{swap.stored_id}",
        now=now)
    return swap.stored_id


def _keep(copy: Copy, content: bytes, org_id: str, now: datetime,
          attested: dict | None):
    return report_copies.keep(org_id, copy.kind, copy.key, copy.digest, content,
                              org_name=copy.org_name, report_id=copy.report_id,
                              domain=copy.domain, date_begin=copy.date_begin,
                              date_end=copy.date_end, received_at=now, attested=attested)


def arrived(copy: Copy, content: bytes, org_id: str, stored_text: str, link: str, provenance,
            takes_place: bool, now: datetime) -> str:
    """A conflicting copy that arrived, in one transaction: the id of the report stored from
    it when it takes the stored one's place, else kept aside and the refusal raised."""
    attested = authenticity.columns(provenance)
    with db.atomic():
        if takes_place:
            return take_place(copy, content, org_id, stored_text, provenance.signed_by, now,
                              attested)
        refusal = keep_aside(copy, content, org_id, stored_text, link, now, attested)
    raise refusal
