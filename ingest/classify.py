"""One verdict per record (docs/sources.md): the rules are rules/verdicts.py's, so a
stored classification, report detail's evidence and a source's verdict never disagree.

1. authenticated      DMARC pass: the policy-evaluated DKIM or SPF verdict is pass.
2. likely_forwarded   a forwarding reason (mailing_list, trusted_forwarder, local_policy), or a
                      DKIM signature of the From domain that failed (present but broken in
                      transit), or a pass for some other DKIM/SPF domain from a source known to
                      forward (sender kind "forwarder").
3. suspicious         no DKIM signature and no SPF pass aligned with the From domain (SPF of
                      the MAIL FROM identity only, as DMARC counts it: a HELO pass is not one)
                      while the source is not a recognised sending service; or a
                      suspicious/malicious reputation, whatever else holds.
4. needs_review       every other DMARC failure (typically a real service not yet aligned).

Pure: a record (anything with the ParsedRecord attributes, a stored Record row included), its
alignment ({"spf": [bool]|None, "dkim": [bool]|None}) and what is known of the sender (a
Sender: kind unknown/service/forwarder, reputation from DNSBL checks), built by storing and by
the enrichment job from the organization's Source row for the IP; no row: UNKNOWN_SENDER.
"""
from __future__ import annotations

from rules import verdicts
from rules.verdicts import AUTHENTICATED, LIKELY_FORWARDED, NEEDS_REVIEW, SUSPICIOUS

REPUTATIONS = ("unknown", "clean", "suspicious", "malicious")
__all__ = ["AUTHENTICATED", "LIKELY_FORWARDED", "NEEDS_REVIEW", "SUSPICIOUS", "REPUTATIONS",
           "UNKNOWN_SENDER", "Sender", "classify"]


class Sender(verdicts.Sender):
    """verdicts.Sender whose reputation must also be one of REPUTATIONS (a typo is an error,
    not a silently unknown sender)."""

    def __post_init__(self):
        super().__post_init__()
        if self.reputation not in REPUTATIONS:
            raise ValueError(f"reputation {self.reputation!r} is not one of "
                             f"{', '.join(REPUTATIONS)}")


UNKNOWN_SENDER = Sender()


def classify(record, alignment: dict, sender: Sender | str = "unknown") -> str:
    """The record's verdict; sender is a Sender or just its kind ("unknown", "service", ...)."""
    return verdicts.classify_record(record, alignment, Sender(kind=sender)
                           if isinstance(sender, str) else sender)
