"""Copies of stored reports kept aside: conflicting copies refused for the figures, and the
reports an operator's `rua report replace` set aside, each ready to be put in place."""
from __future__ import annotations

import zlib
from datetime import datetime

from store.models import ReportCopy


def keep(org_id: str, kind: str, key: str, digest: str, content: bytes, *, org_name: str,
         report_id: str, domain: str, date_begin: int, date_end: int, received_at: datetime,
         form: str = "received", reason: str = "arrived",
         attested: dict | None = None) -> ReportCopy:
    """The kept copy of this content under the key: stored now, or the one stored before (a
    thousand identical copies are kept once). attested: what its mail proves (authenticity,
    signed_by, authenticity_reason), when known."""
    found = kept(org_id, kind, key, digest)
    if found is not None:
        return found
    (ReportCopy.insert(org=org_id, kind=kind, dedupe_key=key, content_digest=digest, form=form,
                       content=zlib.compress(content), org_name=org_name[:255],
                       report_id=report_id[:255],
                       domain=domain, date_begin=date_begin, date_end=date_end, reason=reason,
                       received_at=received_at, **(attested or {}))
     .on_conflict_ignore().execute())      # another process kept the same copy meanwhile
    return kept(org_id, kind, key, digest)


def kept(org_id: str, kind: str, key: str, digest: str) -> ReportCopy | None:
    return ReportCopy.get_or_none(ReportCopy.org == org_id, ReportCopy.kind == kind,
                                  ReportCopy.dedupe_key == key,
                                  ReportCopy.content_digest == digest)


def chosen(org_id: str, kind: str, key: str) -> bool:
    """Whether an operator's `rua report replace` chose the report stored under the key (the
    one it replaced is kept with reason "replaced")."""
    return ReportCopy.select().where(ReportCopy.org == org_id, ReportCopy.kind == kind,
                                     ReportCopy.dedupe_key == key,
                                     ReportCopy.reason == "replaced").exists()


def find(copy_id: int) -> ReportCopy | None:
    return ReportCopy.get_or_none(ReportCopy.id == copy_id)


def of_org(org_id: str) -> list[ReportCopy]:
    """The organization's kept copies, oldest first (content not read)."""
    fields = [f for f in ReportCopy._meta.sorted_fields if f is not ReportCopy.content]
    return list(ReportCopy.select(*fields).where(ReportCopy.org == org_id)
                .order_by(ReportCopy.id))


def content(copy: ReportCopy) -> bytes:
    return zlib.decompress(bytes(copy.content))


def remove(copy: ReportCopy) -> None:
    """The copy is stored now (put in place): it is no longer kept aside."""
    ReportCopy.delete().where(ReportCopy.id == copy.id).execute()
