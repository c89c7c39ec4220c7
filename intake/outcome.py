"""Where a message goes once ingested: pure rules over the pipeline's FileResult."""
from __future__ import annotations

from ingest.pipeline import FileResult

DONE, REFUSED = "done", "refused"


def outcome(result: FileResult) -> str:
    """DONE when every report in the message is stored (now or before), else REFUSED."""
    return REFUSED if result.status == "refused" else DONE


def too_large(origin: str, size: int, limit: int) -> FileResult:
    """The result of a message refused by its size alone, without reading it."""
    reason = f"{origin}: {size} bytes, larger than the {limit}-byte limit"
    return FileResult(origin, refusals=[reason]).settle()
