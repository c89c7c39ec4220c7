"""The event types, each defined once: label, severity, whether a channel may be sent it
(deliverable), when it clears, and whether it expires. /enums, the outbox, the messages, the
snapshotter's expiry and docs/alerts.md's table (checked by a test) all read this table.

Here rather than in webapp/: the /enums document shows them, and the outbox (store/outbox.py)
and the messages it sends (notify/) need the same table without importing the web layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EventType:
    """One event type. Deliverable ones can be pushed to e-mail, a webhook or a chat channel;
    the others surface in the app only. An expiring one is cleared 7 days after it was raised
    (snapshotter/event_refresh.py), whatever else holds."""
    code: str
    label: str
    severity: str
    deliverable: bool
    clears: str
    expires: bool = False


EVENT_TYPES = (
    EventType("new_sender", "New sending source", "info", True,
              "Never by itself: acknowledge it once handled."),
    EventType("unauthorized_sender", "Unauthorized sender", "critical", True,
              "No source sending as the domain is classified `unauthorized`."),
    EventType("compliance_drop", "Compliance dropped", "warning", True,
              "The drop no longer holds, or either span has too few messages to say."),
    EventType("policy_changed", "DMARC policy changed", "info", True,
              "7 days after it was raised (news, not a fault).", expires=True),
    EventType("dns_record_missing", "DNS record missing", "critical", True,
              "The record's kind is `ok` or `warning` again."),
    EventType("dns_record_invalid", "DNS record invalid", "critical", True,
              "The record's kind is `ok` or `warning` again."),
    EventType("spf_lookup_limit", "SPF lookup limit exceeded", "warning", True,
              "SPF needs 10 lookups or fewer."),
    EventType("verification_lost", "Verification lost", "warning", True,
              "The domain is verified again."),
    EventType("blocklisted_source", "Source on a blocklist", "warning", True,
              "The source's blocklist status is `clean`: every zone answered and none lists it."),
    EventType("no_reports", "No reports received", "warning", True, "The next report."),
    EventType("auto_domain_cap", "Reports for new domains refused", "warning", True,
              "Never by itself: acknowledge it once handled."),
    EventType("tls_failures", "TLS delivery failures", "warning", True,
              "A later day is back under 5% with no new result type, or no TLS report day is "
              "recent."),
    EventType("conflicting_copy", "Conflicting copy of a report", "warning", True,
              "Never by itself: acknowledge it once handled."),
    EventType("unauthenticated_reports", "Reports refused: not signed by their reporter",
              "warning", True, "Never by itself: acknowledge it once handled."),
    EventType("weak_dkim_key", "Weak DKIM key", "warning", False,
              "No RSA key under 2048 bits is among the selectors found."),
    EventType("report_parse_warnings", "Report parsed with warnings", "info", False,
              "A newer report from that reporter parses clean, or 7 days after it was raised.",
              expires=True),
    EventType("quota_near_cap", "API quota nearly spent", "warning", False,
              "The hour has ended (the scheduler's `hour` job closes it)."),
)
LABELS = {t.code: t.label for t in EVENT_TYPES}
SEVERITY = {t.code: t.severity for t in EVENT_TYPES}   # raising looks it up
DELIVERABLE = tuple(t.code for t in EVENT_TYPES if t.deliverable)
EXPIRING = tuple(t.code for t in EVENT_TYPES if t.expires)


@dataclass(frozen=True)
class EventToRaise:
    """An event a rule found to hold, for store/events.py to raise under its dedupe key unless
    one is open; its severity is its type's (SEVERITY)."""
    type: str
    key: str
    title: str
    detail: str
    link: str | None = None
    domain: str = ""           # "" for an organization-wide event


@dataclass
class Outcome:
    """What a rule pass found: events to raise, and dedupe keys to clear (closed before
    anything is raised, so a key cleared and raised again opens a new event)."""
    raised: list[EventToRaise] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)

    def add(self, other: "Outcome") -> "Outcome":
        self.raised += other.raised
        self.cleared += other.cleared
        return self
