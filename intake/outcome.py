"""Where a message goes once ingested: pure rules over the pipeline's FileResult."""
from __future__ import annotations

from ingest.pipeline import FileResult

DONE, REFUSED, KEEP = "done", "refused", "keep"
# How ingest/pipeline.py words a failure that is not the message's fault (the store locked or
# unreachable, a bug of ours): such a message stays where it is and is read again next time.
NOT_THE_MESSAGE = ": unexpected error ("


def outcome(result: FileResult) -> str:
    """DONE when every report in it is stored (now or before), KEEP when the failure was not
    the message's, else REFUSED."""
    if any(NOT_THE_MESSAGE in refusal for refusal in result.refusals):
        return KEEP
    return REFUSED if result.status == "refused" else DONE


def too_large(origin: str, size: int, limit: int) -> FileResult:
    """The result of a message refused by its size alone, without reading it."""
    reason = f"{origin}: {size} bytes, larger than the {limit}-byte limit"
    return FileResult(origin, refusals=[reason]).settle()
