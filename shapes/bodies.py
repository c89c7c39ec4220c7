"""The bodies of the snapshot routes as TypedDicts: a body is a plain dict (orjson writes it as
fast as a literal), and its fields, their types and which are optional are declared here once.

Each class is named as webapp/openapi.json's component schema followed by "Body" (the store has
its own Domain, Event and Record); an object the document writes inline is named for its field
(OrgHealthBody, DomainCardBody).
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

class OrgHealthBody(TypedDict):
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
    latest_data_date: date | None


class DomainCardBody(TypedDict):
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


class ActionItemsSummaryBody(TypedDict):
    total_pending: int
    high: int
    medium: int
    low: int


class OverviewBody(TypedDict):
    org_health: OrgHealthBody
    domain_cards: list[DomainCardBody]
    action_items_summary: ActionItemsSummaryBody


# GET /compliance-score

class DomainScoreBody(TypedDict):
    domain: str
    score: float
    grade: Grade
    compliance_rate: float
    spf_pass_rate: float
    dkim_pass_rate: float
    policy: Policy
    total_messages: int


class ComplianceScoreBody(TypedDict):
    overall_score: float
    grade: Grade
    compliance_rate: float
    spf_pass_rate: float
    dkim_pass_rate: float
    policy_strength: float
    domain_scores: list[DomainScoreBody]
    total_messages: int
    total_reports: int
    latest_data_date: date | None


# GET /compliance-score/history and GET /trends: the snapshot holds the points; the route
# answers {"days": n, "points": [...]} with the last n of them.

class HistoryPointBody(TypedDict):
    snapshot_date: date | None
    score: float
    grade: Grade
    compliance_rate: float
    spf_rate: float
    dkim_rate: float
    total_messages: int


class ScoreHistoryBody(TypedDict):
    days: int
    points: list[HistoryPointBody]


class TrendPointBody(TypedDict):
    date: date | None
    total_messages: int
    compliant_messages: int
    failed_messages: int
    reports: int
    compliance_rate: float


class TrendsBody(TypedDict):
    days: int
    points: list[TrendPointBody]


# GET /domains/{domain}/health

class HostedCtaBody(TypedDict):
    label: str
    url: str


class DnsCheckBody(TypedDict):
    status: Literal["ok", "warning", "error", "unknown"]
    details: str
    inherited_from: NotRequired[str]
    hosted_cta: NotRequired[HostedCtaBody | None]


class DnsChecksBody(TypedDict):
    dmarc: DnsCheckBody
    spf: DnsCheckBody
    dkim: DnsCheckBody
    mta_sts: DnsCheckBody
    tls_rpt: DnsCheckBody
    bimi: DnsCheckBody
    dane: DnsCheckBody


class ComplianceFiguresBody(TypedDict):
    rate: float
    spf_pass: float
    dkim_pass: float
    policy: Policy


class TlsFailureTypeBody(TypedDict):
    result_type: str
    sessions: int


class TlsHealthBody(TypedDict):
    successful_sessions: int
    failed_sessions: int
    success_rate: float
    failure_types: list[TlsFailureTypeBody]
    policy_types: list[str]
    last_report_date: date | None


class TopSenderBody(TypedDict):
    ip: str
    count: int
    spf_result: Literal["pass", "fail"]
    dkim_result: Literal["pass", "fail"]
    service_name: NotRequired[str]
    service_icon: NotRequired[str]
    service_slug: NotRequired[str]


class ActionItemBody(TypedDict):
    type: NotRequired[str]
    severity: Severity
    title: str
    suggested_action: str
    cta_url: NotRequired[str]
    cta_label: NotRequired[str]


class SparkPointBody(TypedDict):
    date: date | None
    compliance_rate: float
    total_messages: int


class EmptyStateBody(TypedDict):
    healthy: bool
    message: str
    cta_url: NotRequired[str]
    cta_label: NotRequired[str]


class DomainHealthBody(TypedDict):
    domain: str
    overall_score: int
    grade: Grade
    verdict: str
    last_report_date: date | None
    total_messages: int
    dns: DnsChecksBody
    compliance: ComplianceFiguresBody
    verified_rate: float | None
    tls: TlsHealthBody | None
    top_senders: list[TopSenderBody]
    alert_count: int
    action_items: list[ActionItemBody] | None
    trend_sparkline: list[SparkPointBody]
    empty_state: NotRequired[EmptyStateBody | None]
    computed_at: datetime | None
