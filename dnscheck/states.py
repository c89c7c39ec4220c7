"""Verification states: does the domain's DMARC (rua=, ruf=) and TLS-RPT record report to us?

Pure. The seven values are the contract's. A kind not checked in this run (None) stays
`pending`; DNS that could not tell is `unconfirmed`, never a negative. Without a report address
(RUA_REPORT_ADDRESS) no published record can be confirmed as ours, so it is `unconfirmed` too:
`verified` is never guessed.
"""
from __future__ import annotations

from urllib.parse import unquote

from dnscheck.verdict import ERROR, UNKNOWN, Verdict

PENDING, VERIFIED, VERIFIED_INHERITED = "pending", "verified", "verified_inherited"
NOT_PUBLISHED, NOT_OURS, MULTIPLE, UNCONFIRMED = (
    "not_published", "published_not_ours", "multiple_records", "unconfirmed")
STATES = (PENDING, VERIFIED, VERIFIED_INHERITED, NOT_PUBLISHED, NOT_OURS, MULTIPLE, UNCONFIRMED)


def verification(dmarc: Verdict | None, tls_rpt: Verdict | None, report_address: str) -> dict:
    """The three states and what follows from them, from this run's DMARC and TLS-RPT verdicts."""
    ours = addresses(report_address)
    dmarc_state = state(dmarc, "rua", ours)
    forensic_state = state(dmarc, "ruf", ours)
    tlsrpt_state = state(tls_rpt, "rua", ours)
    inherited = dmarc_state == VERIFIED_INHERITED
    return {
        "dmarc_state": dmarc_state,
        "forensic_state": forensic_state,
        "tlsrpt_state": tlsrpt_state,
        "verified_source": {VERIFIED: "self", VERIFIED_INHERITED: "inherited"}.get(dmarc_state, ""),
        "inherited_from": (dmarc.inherited_from or "") if inherited else "",
        "tlsrpt_enabled": _enabled(tls_rpt, "rua"),
        "forensic_enabled": _enabled(dmarc, "ruf"),
    }


def state(verdict: Verdict | None, tag: str, ours: set[str]) -> str:
    """One state from a kind's verdict and the report URIs under `tag` in its facts."""
    if verdict is None:
        return PENDING
    if verdict.status == UNKNOWN:
        return UNCONFIRMED
    records = _records(verdict)
    if records == 0:
        return NOT_PUBLISHED
    if records > 1:
        return MULTIPLE
    uris = verdict.facts.get(tag) or []
    if not uris:
        # ruf= is the forensic state's own subject; a DMARC record without rua= still exists.
        return NOT_PUBLISHED if tag == "ruf" else NOT_OURS
    targets = addresses(",".join(uris))
    if verdict.status == ERROR:
        return NOT_OURS        # receivers discard a record they cannot read: no reports to us
    if not ours:
        return UNCONFIRMED
    if not targets & ours:
        return NOT_OURS        # includes https: report URIs (TLS-RPT), which are not ours
    return VERIFIED_INHERITED if verdict.inherited_from else VERIFIED


def addresses(value: str) -> set[str]:
    """Mail addresses of a comma list of mailto: URIs or bare addresses, in one comparable form."""
    found = set()
    for item in value.split(","):
        item = unquote(item.strip())
        if item.lower().startswith("mailto:"):
            item = item[len("mailto:"):]
        elif ":" in item:
            continue          # https: and other schemes are not mail addresses
        item = item.split("!", 1)[0].split("?", 1)[0].strip().lower()
        if "@" in item:
            found.add(item)
    return found


def _records(verdict: Verdict) -> int:
    """How many records of the kind were served; a stored verdict without the count is read
    from its addresses."""
    if "records" in verdict.facts:
        return int(verdict.facts["records"])
    return 1 if verdict.facts.get("rua") or verdict.facts.get("ruf") else 0


def _enabled(verdict: Verdict | None, tag: str) -> bool:
    """The kind's one record asks for reports of this kind (and is readable)."""
    return (verdict is not None and verdict.status not in (UNKNOWN, ERROR)
            and _records(verdict) == 1 and bool(verdict.facts.get(tag)))
