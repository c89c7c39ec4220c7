"""One verdict per record (decisions.md, "Reports"): the first rule that holds wins.

1. authenticated      DMARC pass: the policy-evaluated DKIM or SPF verdict is pass.
2. likely_forwarded   a forwarding reason (mailing_list, trusted_forwarder, local_policy), or a
                      DKIM signature of the From domain that failed (present but broken in
                      transit), or a pass for some other DKIM/SPF domain from a source known to
                      forward (sender kind "forwarder").
3. suspicious         no DKIM signature and no SPF pass aligned with the From domain (SPF of
                      the MAIL FROM identity only, as DMARC counts it: a HELO pass is not one)
                      while the source is not a recognised sending service; or a suspicious/malicious
                      reputation, whatever else holds.
4. needs_review       every other DMARC failure (typically a real service not yet aligned).

Pure: a record (anything with the ParsedRecord attributes, a stored Record row included), its
alignment ({"spf": [bool]|None, "dkim": [bool]|None}) and what is known of the sender.
"""
from __future__ import annotations

from dataclasses import dataclass

AUTHENTICATED = "authenticated"
LIKELY_FORWARDED = "likely_forwarded"
SUSPICIOUS = "suspicious"
NEEDS_REVIEW = "needs_review"

SENDER_KINDS = ("unknown", "service", "forwarder")
REPUTATIONS = ("unknown", "clean", "suspicious", "malicious")
# "forwarded" is the RFC 7489 spelling the parser maps to trusted_forwarder; accept both.
FORWARDING_REASONS = frozenset({"mailing_list", "trusted_forwarder", "local_policy", "forwarded"})
BAD_REPUTATIONS = frozenset({"suspicious", "malicious"})


@dataclass(frozen=True)
class Sender:
    """What is known of a record's sending IP.

    kind: "unknown" (not identified), "service" (a recognised sending service such as an ESP),
    "forwarder" (a known forwarding or mailing-list host). reputation: "unknown", "clean",
    "suspicious" or "malicious" (from DNSBL checks). Storing builds one from the org's Source row
    for the IP (service_slug -> "service", abuse_status -> reputation); no row: UNKNOWN_SENDER.
    """
    kind: str = "unknown"
    reputation: str = "unknown"

    def __post_init__(self):
        if self.kind not in SENDER_KINDS:
            raise ValueError(f"sender kind {self.kind!r} is not one of {', '.join(SENDER_KINDS)}")
        if self.reputation not in REPUTATIONS:
            raise ValueError(f"reputation {self.reputation!r} is not one of "
                             f"{', '.join(REPUTATIONS)}")


UNKNOWN_SENDER = Sender()


def classify(record, alignment: dict, sender: Sender | str = "unknown") -> str:
    """The record's verdict; sender is a Sender or just its kind ("unknown", "service", ...)."""
    if isinstance(sender, str):
        sender = Sender(kind=sender)
    if _lower(record.dkim) == "pass" or _lower(record.spf) == "pass":
        return AUTHENTICATED
    dkim = _results(record.auth_dkim, (alignment or {}).get("dkim"))
    spf = _mfrom(record.auth_spf, _results(record.auth_spf, (alignment or {}).get("spf")))
    if _forwarded(record, dkim, spf, sender):
        return LIKELY_FORWARDED
    if sender.reputation in BAD_REPUTATIONS:
        return SUSPICIOUS
    aligned_signature = any(aligned and result not in ("", "none") for result, aligned in dkim)
    aligned_spf_pass = any(aligned and result == "pass" for result, aligned in spf)
    if not aligned_signature and not aligned_spf_pass and sender.kind != "service":
        return SUSPICIOUS
    return NEEDS_REVIEW


def _forwarded(record, dkim, spf, sender: Sender) -> bool:
    reasons = {_lower(r.get("Type")) for r in record.reasons or () if isinstance(r, dict)}
    if reasons & FORWARDING_REASONS:
        return True
    if any(aligned and result == "fail" for result, aligned in dkim):
        return True
    if sender.kind == "forwarder":
        return any(not aligned and result == "pass" for result, aligned in dkim + spf)
    return False


def _mfrom(entries, pairs) -> list[tuple[str, bool]]:
    """The SPF pairs of the MAIL FROM identity (scope mfrom, or unstated): DMARC ignores HELO."""
    return [pair for pair, entry in zip(pairs, entries or ())
            if _lower(entry.get("Scope") if isinstance(entry, dict) else "") in ("", "mfrom")]


def _results(results, flags) -> list[tuple[str, bool]]:
    """(result, aligned) pairs; a missing alignment flag counts as not aligned."""
    flags = list(flags or ())
    return [(_lower(entry.get("Result")) if isinstance(entry, dict) else "",
             bool(flags[i]) if i < len(flags) else False)
            for i, entry in enumerate(results or ())]


def _lower(value) -> str:
    return value.strip().lower() if isinstance(value, str) else ""
