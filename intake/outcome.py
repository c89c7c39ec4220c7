"""Where a message goes once ingested: pure rules over the pipeline's FileResult."""
from __future__ import annotations

from ingest.pipeline import STORE_FAILED, UNEXPECTED, FileResult

DONE, REFUSED, KEEP = "done", "refused", "keep"
# A reading that met an error rua cannot classify: kept and read again until it has failed
# intake/poison.py's POISON_AFTER times, then refused (poison.filed_as decides).
FAILED = "failed"


def outcome(result: FileResult) -> str:
    """KEEP when the store failed while reading it (the message is not to blame); FAILED when
    an error rua cannot classify refused part of it; else REFUSED when anything in it was
    refused, DONE when every report in it is stored (now or before)."""
    if result.fault == STORE_FAILED:
        return KEEP
    if result.fault == UNEXPECTED:
        return FAILED
    return REFUSED if result.status == "refused" else DONE


def too_large(origin: str, size: int, limit: int) -> FileResult:
    """The result of a message refused by its size alone, without reading it."""
    reason = f"{origin}: {size} bytes, larger than the {limit}-byte limit"
    return FileResult(origin, refusals=[reason]).settle()
