"""The bodies of the snapshot routes as TypedDicts: a body is a plain dict (orjson writes it as
fast as a literal), and its fields, their types and which are optional are declared here once.

Class names are those of webapp/openapi.json's component schemas where the document names the
object; an object the document writes inline is named for its field (OrgHealth, DomainCard).
Days are `date`, instants `datetime`: orjson writes them as the contract's strings.
No `from __future__ import annotations` here: with string annotations Python 3.11 cannot see
NotRequired, and every field would count as required.
"""

from datetime import date, datetime
from typing import Literal, NotRequired, TypedDict

# Values listed by a registry (the /enums catalog, webapp/enums.py), from which
# webapp/openapi_enums.py writes the document's enumeration: named here, listed there only.
Grade = str             # "grade"
Policy = str            # "dmarc_policy"
Severity = str          # "action_item_severity"
HealthState = str       # "health_state"


# GET /dashboard/overview

class OrgHealth(TypedDict):
    overall_score: int
    grade: Grade
    verdict: str
    health_state: HealthState
    compliance_rate: float
    total_messages: int
    total_domains: int
    domains_needing_attention: int
    unique_source_ips: int
    has_data: bool
    forwarded_messages: int


class DomainCard(TypedDict):
    domain: str
    score: int
    grade: Grade
    verdict: str
    compliance_rate: float
    total_messages: int
    policy: Policy                  # or "" when the reported one is unreadable
    top_issue: str
    top_issue_severity: Severity    # or "" without an open item
    action_count: int
    inherited: NotRequired[bool]
    inherited_from: NotRequired[str]
    forwarded_messages: int


class ActionItemsSummary(TypedDict):
    total_pending: int
    high: int
    medium: int
    low: int


class Overview(TypedDict):
    org_health: OrgHealth
    domain_cards: list[DomainCard]
    action_items_summary: ActionItemsSummary


# GET /compliance-score

class DomainScore(TypedDict):
    domain: str
    score: float
    grade: Grade
    compliance_rate: float
    spf_pass_rate: float
    dkim_pass_rate: float
    policy: Policy
    total_messages: int


class ComplianceScore(TypedDict):
    overall_score: float
    grade: Grade
    compliance_rate: float
    spf_pass_rate: float
    dkim_pass_rate: float
    policy_strength: float
    domain_scores: list[DomainScore]
    total_messages: int
    total_reports: int


# GET /compliance-score/history and GET /trends: the snapshot holds the points; the route
# answers {"days": n, "points": [...]} with the last n of them.

class HistoryPoint(TypedDict):
    snapshot_date: date | None
    score: float
    grade: Grade
    compliance_rate: float
    spf_rate: float
    dkim_rate: float
    total_messages: int


class ScoreHistory(TypedDict):
    days: int
    points: list[HistoryPoint]


class TrendPoint(TypedDict):
    date: date | None
    total_messages: int
    compliant_messages: int
    failed_messages: int
    reports: int
    compliance_rate: float


class Trends(TypedDict):
    days: int
    points: list[TrendPoint]


# GET /domains/{domain}/health

class HostedCta(TypedDict):
    label: str
    url: str


class DnsCheck(TypedDict):
    status: Literal["ok", "warning", "error", "unknown"]
    details: str
    inherited_from: NotRequired[str]
    hosted_cta: NotRequired[HostedCta | None]


class DnsChecks(TypedDict):
    dmarc: DnsCheck
    spf: DnsCheck
    dkim: DnsCheck
    mta_sts: DnsCheck
    tls_rpt: DnsCheck
    bimi: DnsCheck
    dane: DnsCheck


class ComplianceFigures(TypedDict):
    rate: float
    spf_pass: float
    dkim_pass: float
    policy: Policy


class TlsFailureType(TypedDict):
    result_type: str
    sessions: int


class TlsHealth(TypedDict):
    successful_sessions: int
    failed_sessions: int
    success_rate: float
    failure_types: list[TlsFailureType]
    policy_types: list[str]
    last_report_date: date | None


class TopSender(TypedDict):
    ip: str
    count: int
    spf_result: Literal["pass", "fail"]
    dkim_result: Literal["pass", "fail"]
    service_name: NotRequired[str]
    service_icon: NotRequired[str]
    service_slug: NotRequired[str]


class ActionItem(TypedDict):
    type: NotRequired[str]
    severity: Severity
    title: str
    suggested_action: str
    cta_url: NotRequired[str]
    cta_label: NotRequired[str]


class SparkPoint(TypedDict):
    date: date | None
    compliance_rate: float
    total_messages: int


class EmptyState(TypedDict):
    healthy: bool
    message: str
    cta_url: NotRequired[str]
    cta_label: NotRequired[str]


class DomainHealth(TypedDict):
    domain: str
    overall_score: int
    grade: Grade
    verdict: str
    last_report_date: date | None
    total_messages: int
    dns: DnsChecks
    compliance: ComplianceFigures
    tls: TlsHealth | None
    top_senders: list[TopSender]
    alert_count: int
    action_items: list[ActionItem] | None
    trend_sparkline: list[SparkPoint]
    empty_state: NotRequired[EmptyState | None]
    computed_at: datetime | None
