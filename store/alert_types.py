"""The 17 event types: label, severity and whether a channel may be sent them (deliverable).

Here rather than in webapp/: the /enums document shows them, and the outbox (store/outbox.py)
and the messages it sends (notify/) need the same table without importing the web layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# (code, label, severity, deliverable): the deliverable ones can be pushed to email, a
# webhook or a chat channel; the others surface in the app only.
ALERT_TYPES = [
    ("new_sender", "New sending source", "info", True),
    ("unauthorized_sender", "Unauthorized sender", "critical", True),
    ("compliance_drop", "Compliance dropped", "warning", True),
    ("policy_changed", "DMARC policy changed", "info", True),
    ("dns_record_missing", "DNS record missing", "critical", True),
    ("dns_record_invalid", "DNS record invalid", "critical", True),
    ("spf_lookup_limit", "SPF lookup limit exceeded", "warning", True),
    ("verification_lost", "Verification lost", "warning", True),
    ("blocklisted_source", "Source on a blocklist", "warning", True),
    ("no_reports", "No reports received", "warning", True),
    ("auto_domain_cap", "Reports for new domains refused", "warning", True),
    ("tls_failures", "TLS delivery failures", "warning", True),
    ("conflicting_copy", "Conflicting copy of a report", "warning", True),
    ("unauthenticated_reports", "Reports refused: not signed by their reporter", "warning", True),
    ("weak_dkim_key", "Weak DKIM key", "warning", False),
    ("report_parse_warnings", "Report parsed with warnings", "info", False),
    ("quota_near_cap", "API quota nearly spent", "warning", False),
]
LABELS = {code: label for code, label, _, _ in ALERT_TYPES}
SEVERITY = {code: severity for code, _, severity, _ in ALERT_TYPES}   # raising looks it up
DELIVERABLE = tuple(code for code, _, _, deliverable in ALERT_TYPES if deliverable)


@dataclass(frozen=True)
class Condition:
    """A condition a rule found true, to raise as an event (store/events.py) under its key;
    its severity is its type's (SEVERITY)."""
    type: str
    key: str
    title: str
    detail: str
    link: str | None = None
    domain: str = ""           # "" for an organization-wide condition


@dataclass
class Outcome:
    """What a rule pass found: conditions to raise, and dedupe keys to clear (closed before
    anything is raised, so a key cleared and raised again opens a new event)."""
    raised: list[Condition] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)

    def add(self, other: "Outcome") -> "Outcome":
        self.raised += other.raised
        self.cleared += other.cleared
        return self
