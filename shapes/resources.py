"""The bodies of routes answered from the store at request time (lists, figures, events, usage,
the enumerations) as TypedDicts. Their views build them on hot paths as literals; these
declarations are what tests/shapes checks those bodies and webapp/openapi.json against.
No `from __future__ import annotations` here (see shapes/bodies.py)."""

from datetime import date, datetime
from typing import Literal, NotRequired, TypedDict

# Values listed by a registry, as in shapes/bodies.py: the /enums catalog's categories.
VerificationState = str     # "verification_state"
EventTypeCode = str         # "alert_type": store/event_types.py EVENT_TYPES
EventSeverity = str         # "alert_severity"
Authenticity = str          # "authenticity": what a report's mail proves of its origin


class PagingBody(TypedDict):
    total: int
    limit: int
    offset: int


# GET /statistics and GET /reports/date-range

class StatisticsBody(TypedDict):
    total_reports: int
    total_messages: int
    compliant_messages: int
    compliance_rate: float
    unique_source_ips: int
    unique_domains: int
    has_data: bool


class ReportDateRangeBody(TypedDict):
    earliest: date | None
    latest: date | None


# GET /domains

class DomainBody(TypedDict):
    id: NotRequired[str]
    domain: str
    verified: bool
    dmarc_state: VerificationState
    tlsrpt_enabled: bool
    tlsrpt_state: VerificationState
    forensic_enabled: bool
    forensic_state: VerificationState
    source: Literal["manual", "auto", "both"]
    verified_source: NotRequired[Literal["self", "inherited", ""]]
    inherited_from: NotRequired[str]
    report_count: int
    tls_report_count: int
    verified_at: NotRequired[datetime | None]


class DomainListBody(PagingBody):
    domains: list[DomainBody]


# GET /top-sources

# The functional form: "pass" is a Python keyword.
TopSourceBody = TypedDict("TopSourceBody", {
    "source_ip": str, "count": int, "pass": int, "fail": int, "spf_fail": int, "dkim_fail": int,
    "service_name": NotRequired[str], "service_icon": NotRequired[str],
    "service_slug": NotRequired[str]})


class TopSourceListBody(PagingBody):
    sources: list[TopSourceBody]


# GET /events

class EventBody(TypedDict):
    id: str
    type: EventTypeCode
    type_label: str
    severity: EventSeverity
    title: str
    detail: str
    domain: str
    link: str | None
    acknowledged: bool
    created_at: datetime | None


class EventListBody(PagingBody):
    events: list[EventBody]


# GET /api-keys/usage

class UsageWindowBody(TypedDict):
    used: int
    remaining: int
    limit: int
    reset_at: datetime | None


class UsageVerdictBody(TypedDict):
    state: Literal["no_traffic", "capped", "near_cap", "unlimited", "ok"]
    summary: str


class UsagePointBody(TypedDict):
    ts: datetime | None
    allowed: int
    rejected: int


class KeyUsageBody(TypedDict):
    id: str
    name: str
    prefix: str
    allowed: int
    rejected: int
    revoked: bool
    last_used_at: datetime | None


class UsageBody(TypedDict):
    days: int
    bucket: Literal["hour", "day"]
    window: UsageWindowBody
    verdict: UsageVerdictBody
    points: list[UsagePointBody] | None
    keys: list[KeyUsageBody] | None
    api_base_url: str


# GET /enums

class EnumEntryBody(TypedDict):
    code: str
    label: str
    severity: NotRequired[Literal["neutral", "success", "info", "warning", "critical"]]
    deliverable: NotRequired[bool]


class EnumsBody(TypedDict):
    verification_state: list[EnumEntryBody]
    alert_type: list[EnumEntryBody]
    alert_severity: list[EnumEntryBody]
    action_item_severity: list[EnumEntryBody]
    reputation_status: list[EnumEntryBody]
    dmarc_policy: list[EnumEntryBody]
    health_state: list[EnumEntryBody]
    grade: list[EnumEntryBody]
    tls_result_type: list[EnumEntryBody]
    authenticity: list[EnumEntryBody]


# GET /reports and GET /tls-reports

class ReportSummaryBody(TypedDict):
    id: str
    report_id: str
    org_name: str
    domain: str
    total_messages: int
    compliant_messages: int
    compliance_rate: float
    policy_p: str            # the DMARC policy, or what the reporter wrote
    date_begin: datetime | None
    date_end: datetime | None
    received_at: datetime | None
    authenticity: Authenticity
    signed_by: str


class ReportListBody(PagingBody):
    reports: list[ReportSummaryBody]
    has_any: bool


class TlsReportSummaryBody(TypedDict):
    id: str
    report_id: str
    org_name: str
    policy_domains: list[str]
    date_begin: datetime | None
    date_end: datetime | None
    received_at: datetime | None
    successful_sessions: int
    failed_sessions: int
    success_rate: float
    authenticity: Authenticity
    signed_by: str


class TlsReportListBody(PagingBody):
    tls_reports: list[TlsReportSummaryBody]
    has_any: bool


# GET /sources and GET /sources/{ip}; the functional form, as "pass" is a Python keyword.

ReputationStatus = str      # "reputation_status"

SOURCE_FIGURES = {
    "source_ip": str, "total_messages": int, "pass": int, "fail": int, "spf_fail": int,
    "dkim_fail": int, "compliance_rate": float}
SOURCE_IDENTITY = {
    "first_seen": datetime | None, "last_seen": datetime | None, "ptr": str | None,
    "service_name": str | None, "service_slug": str | None, "service_icon": str | None,
    "abuse_status": ReputationStatus, "authorized": bool, "country": str | None}

SourceRowBody = TypedDict("SourceRowBody", {**SOURCE_FIGURES, "domains": list[str], **SOURCE_IDENTITY})


class SourceListBody(PagingBody):
    sources: list[SourceRowBody]
    has_any: bool


class DispositionsBody(TypedDict):
    none: int
    quarantine: int
    reject: int


SourceDomainBody = TypedDict("SourceDomainBody", {
    "domain": str, "total_messages": int, "pass": int, "fail": int,
    "dispositions": DispositionsBody, "spf_fail": int, "dkim_fail": int, "compliance_rate": float,
    "first_seen": datetime | None, "last_seen": datetime | None})


class GeoBody(TypedDict):
    country: str | None
    country_name: str | None
    asn: int | None
    as_org: str | None


class BlocklistBody(TypedDict):
    status: Literal["listed", "clean", "unknown"]
    listed_on: list[str]
    checked_at: datetime | None


SourceDayBody = TypedDict("SourceDayBody", {"date": date | None, "total_messages": int, "pass": int,
                                    "fail": int})

SourceDetailBody = TypedDict("SourceDetailBody", {
    **SOURCE_FIGURES, **SOURCE_IDENTITY, "domains": list[SourceDomainBody], "geo": GeoBody,
    "blocklist": BlocklistBody,
    "classification": Literal["authorized", "forwarder", "unauthorized", "unknown"],
    "timeline": list[SourceDayBody], "fcrdns": Literal["pass", "fail", "none", "unknown"],
    "service_kind": Literal["mailbox_provider", "esp", "transactional", "forwarder",
                            "security_gateway"] | None,
    "classification_reason": str, "enriched_at": datetime | None})
