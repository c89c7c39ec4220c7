"""Plain values the snapshots are computed from: counts per day, policies, senders, items."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

WINDOW_DAYS = 30          # the scoring window: the last 30 UTC days, today included
TREND_DAYS = 365          # the longest trend series (the /trends maximum)
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}
EVENT_SEVERITY = {"critical": "high", "warning": "medium", "info": "low"}


@dataclass(frozen=True, slots=True)
class SpanTally:
    """Additive message counts for a span of days, named as DailyRollup's columns."""
    messages: int = 0
    compliant: int = 0
    spf_aligned_pass: int = 0
    dkim_aligned_pass: int = 0
    forwarded: int = 0
    reports: int = 0

    def __add__(self, other: "SpanTally") -> "SpanTally":
        return SpanTally(self.messages + other.messages, self.compliant + other.compliant,
                         self.spf_aligned_pass + other.spf_aligned_pass,
                         self.dkim_aligned_pass + other.dkim_aligned_pass,
                         self.forwarded + other.forwarded, self.reports + other.reports)

    def __sub__(self, other: "SpanTally") -> "SpanTally":
        return SpanTally(self.messages - other.messages, self.compliant - other.compliant,
                         self.spf_aligned_pass - other.spf_aligned_pass,
                         self.dkim_aligned_pass - other.dkim_aligned_pass,
                         self.forwarded - other.forwarded, self.reports - other.reports)


ZERO = SpanTally()


@dataclass(frozen=True, slots=True)
class TlsTally:
    """One domain's SMTP TLS sessions on one day, as its TLS reports counted them."""
    successful: int = 0
    failed: int = 0
    reports: int = 0
    failures: tuple = ()             # ((result type, failed sessions), ...)
    policy_types: tuple = ()


@dataclass(frozen=True, slots=True)
class PublishedPolicy:
    """The DMARC policy a report published: p, pct (None = 100) and testing (t=y)."""
    p: str = ""
    pct: int | None = None
    testing: str = ""


@dataclass(frozen=True, slots=True)
class TopSender:
    """One source IP's messages for a domain in the scoring window."""
    ip: str
    messages: int
    spf_aligned_pass: int
    dkim_aligned_pass: int
    service_name: str | None = None
    service_slug: str | None = None
    service_icon: str | None = None


@dataclass(frozen=True, slots=True)
class ActionItem:
    """An open action item: from an open event or a DNS gap."""
    type: str
    severity: str                    # high, medium, low
    title: str
    suggested_action: str
    cta_url: str | None = None
    cta_label: str | None = None
    record_kind: str = ""            # an event of the live DNS check: the record kind it is about


@dataclass
class DomainFacts:
    """What is known of one domain: per-day tallies, policies seen, senders, open items, DNS."""
    name: str
    monitored: bool = True
    days: dict[date, SpanTally] = field(default_factory=dict)
    policies: list[tuple[date, PublishedPolicy]] = field(default_factory=list)   # oldest first
    last_report_day: date | None = None
    senders: list[TopSender] = field(default_factory=list)                 # busiest first
    items: list[ActionItem] = field(default_factory=list)
    dns: dict | None = None          # the last live DNS check per kind; None = never checked
    inherited_from: str = ""         # organizational parent whose record covers the domain
    tls_days: dict[date, TlsTally] = field(default_factory=dict)        # TLS report days
    verified_messages: int = 0       # of the scoring window's, in reports whose mail is verified


@dataclass
class OrgFacts:
    """Everything the organization's blobs are computed from, as of `today` (UTC)."""
    today: date
    domains: dict[str, DomainFacts] = field(default_factory=dict)
    unique_ips: int = 0              # distinct source IPs in the scoring window
    org_items: list[ActionItem] = field(default_factory=list)   # from events of no one domain
    report_address: str = ""

    @property
    def has_data(self) -> bool:
        return any(d.last_report_day is not None for d in self.domains.values())
