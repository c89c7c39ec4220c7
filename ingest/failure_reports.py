"""Recognize a DMARC failure (forensic) report, so it is refused by name rather than as noise."""
from __future__ import annotations

import email
import email.policy
import re

_SUBJECT = re.compile(r"\b(failure|forensic)\s+report\b", re.IGNORECASE)


def is_failure_report(raw: bytes) -> bool:
    """A message carrying an ARF part (message/feedback-report), typed report-type=feedback-report,
    or a multipart/report whose subject calls it a DMARC failure or forensic report."""
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    if message.get_content_type() == "multipart/report":
        if str(message.get_param("report-type") or "").lower() == "feedback-report":
            return True
        if _SUBJECT.search(str(message.get("Subject", ""))):
            return True
    return any(part.get_content_type() == "message/feedback-report" for part in message.walk())
