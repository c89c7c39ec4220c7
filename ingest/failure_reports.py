"""Recognize a DMARC failure (forensic) report, so it is refused by name rather than as noise."""
from __future__ import annotations

import email
import email.policy
import re

from ingest.mail import MAX_HEADER_BYTES

_SUBJECT = re.compile(r"\b(failure|forensic)\s+report\b", re.IGNORECASE)
_END_OF_HEADER = re.compile(rb"\r?\n\r?\n")


def is_failure_report(raw: bytes, leaf_types: set[str]) -> bool:
    """A message carrying an ARF part (message/feedback-report), typed report-type=feedback-report,
    or a multipart/report whose subject calls it a DMARC failure or forensic report. Only the
    top header block is parsed, cut at the mail budget's header limit (ingest/mail.py): the
    leaf parts' types come from the budgeted walk already made."""
    if "message/feedback-report" in leaf_types:
        return True
    end = _END_OF_HEADER.search(raw, 0, MAX_HEADER_BYTES)
    head = raw[:end.start() if end else MAX_HEADER_BYTES].lstrip()
    message = email.message_from_bytes(head, policy=email.policy.compat32)
    if message.get_content_type() != "multipart/report":
        return False
    if str(message.get_param("report-type") or "").lower() == "feedback-report":
        return True
    return bool(_SUBJECT.search(str(message.get("Subject", ""))))
