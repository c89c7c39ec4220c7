"""What a report's mail proves, kept on the report, and the refusal RUA_REQUIRE_DKIM_FROM
makes (rules/authenticity.py has the rules themselves)."""
from __future__ import annotations

from datetime import datetime

from ingest.model import ReportError
from ingest.printable import bounded
from rules.authenticity import Provenance
from store import events


def columns(provenance: Provenance) -> dict:
    """The report's (or kept copy's) columns saying what its mail proves."""
    return {"authenticity": provenance.authenticity, "signed_by": provenance.signed_by[:253],
            "authenticity_reason": provenance.reason[:255]}


def of_row(row) -> Provenance:
    """What a stored report's (or kept copy's) mail proved, as stored."""
    return Provenance(row.authenticity, row.signed_by, row.authenticity_reason)


def refuse(org_id: str, domain: str, reason: str, now: datetime) -> ReportError:
    """The refusal of a report RUA_REQUIRE_DKIM_FROM refuses, after telling the organization's
    people once per domain and day through an unauthenticated_reports event."""
    day = now.date().isoformat()
    events.raise_event(
        org_id, "unauthenticated_reports", f"unauthenticated_reports:{domain}:{day}",
        title=f"Reports for {domain} refused: not signed by their reporter",
        detail=(f"Reports for {domain} claiming a reporter listed in RUA_REQUIRE_DKIM_FROM "
                f"arrived in mail not signed by it, and were refused (first: {bounded(reason)}). "
                f"A forger, or a gateway that rewrites mail: `rua fetch` files them as refused."),
        domain=domain[:253], now=now)
    return ReportError(reason)
