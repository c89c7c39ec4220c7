"""A record kind's verdict: status, an actionable sentence, and the facts later features read."""
from __future__ import annotations

from dataclasses import dataclass, field

OK, WARNING, ERROR, UNKNOWN = "ok", "warning", "error", "unknown"
STATUSES = (OK, WARNING, ERROR, UNKNOWN)
# The fact marking an `error` that is an optional record's absence, not a broken record.
ABSENT = "absent"


@dataclass(frozen=True)
class Verdict:
    status: str
    details: str
    inherited_from: str | None = None
    hosted_cta: dict | None = None
    facts: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown verdict status {self.status!r}")

    def as_stored(self) -> dict:
        """The shape kept in Domain.dns[kind]: status, details, optional keys, then the facts."""
        stored = {"status": self.status, "details": self.details}
        if self.inherited_from:
            stored["inherited_from"] = self.inherited_from
        if self.hosted_cta:
            stored["hosted_cta"] = self.hosted_cta
        stored.update(self.facts)
        return stored


def hosted_cta(domain: str, kind: str, label: str) -> dict:
    """The in-app link to the hosted-DNS screen for this record (only for missing or failing)."""
    return {"label": label, "url": f"/domains/{domain}/dns?record={kind}"}
