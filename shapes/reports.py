"""The bodies of GET /reports/{id} and GET /tls-reports/{id} as TypedDicts: the report as its
reporter wrote it (hence DMARC's XML element names and RFC 8460's JSON member names, in the
functional form where a name is no Python identifier) with rua's readings beside it.
Values the contract leaves open (a policy, a result, as the reporter wrote it) are `str`.
No `from __future__ import annotations` here (see shapes/bodies.py)."""

from datetime import datetime
from typing import Literal, NotRequired, TypedDict

from shapes.resources import Authenticity

RecordRule = Literal["authenticated", "likely_forwarded", "suspicious", "needs_review"]


# GET /reports/{id}

class DateRangeBody(TypedDict):
    Begin: int
    End: int


class ReportMetadataBody(TypedDict):
    OrgName: str
    Email: str
    ExtraContactInfo: str
    ReportID: str
    DateRange: DateRangeBody
    Errors: list[str] | None
    Generator: str


class PolicyPublishedBody(TypedDict):
    Domain: str
    ADKIM: str
    ASPF: str
    P: str
    SP: str
    NP: str
    PCT: int | None
    FO: str
    T: str
    PSD: str
    DiscoveryMethod: str


class ReasonBody(TypedDict):
    Type: str
    Comment: str


class PolicyEvaluatedBody(TypedDict):
    Disposition: str
    DKIM: str
    SPF: str
    Reason: list[ReasonBody] | None


class RowBody(TypedDict):
    SourceIP: str
    Count: int
    PolicyEvaluated: PolicyEvaluatedBody


class IdentifiersBody(TypedDict):
    EnvelopeTo: str
    EnvelopeFrom: str
    HeaderFrom: str


class DkimResultBody(TypedDict):
    Domain: str
    Selector: str
    Result: str
    HumanResult: str


class SpfResultBody(TypedDict):
    Domain: str
    Scope: str
    Result: str
    HumanResult: str


class AuthResultsBody(TypedDict):
    DKIM: list[DkimResultBody] | None
    SPF: list[SpfResultBody] | None


class RecordBody(TypedDict):
    Row: RowBody
    Identifiers: IdentifiersBody
    AuthResults: AuthResultsBody


class RecordEvidenceBody(TypedDict):
    rule: RecordRule
    because: list[str]
    sentence: str


class RecordAlignmentBody(TypedDict):
    spf: list[bool] | None
    dkim: list[bool] | None


class FailureSummaryBody(TypedDict):
    spf_only: int
    dkim_only: int
    both: int
    total: int


class ReportDetailBody(TypedDict):
    Version: str
    ReportMetadata: ReportMetadataBody
    PolicyPublished: PolicyPublishedBody
    Records: list[RecordBody] | None
    parse_warnings: NotRequired[list[str] | None]
    record_classifications: list[RecordRule]
    record_evidence: list[RecordEvidenceBody]
    record_alignment: list[RecordAlignmentBody]
    failure_summary: FailureSummaryBody
    records_pruned_at: datetime | None
    authenticity: Authenticity
    signed_by: str
    authenticity_reason: str


# GET /tls-reports/{id}: RFC 8460's members; a count may arrive as text.

TlsDateRangeBody = TypedDict("TlsDateRangeBody", {"start-datetime": NotRequired[str],
                                          "end-datetime": NotRequired[str]})
TlsPolicyBody = TypedDict("TlsPolicyBody", {
    "policy-type": NotRequired[str], "policy-string": NotRequired[list[str] | str],
    "policy-domain": NotRequired[str], "mx-host": NotRequired[list[str] | str]})
TlsSummaryBody = TypedDict("TlsSummaryBody", {
    "total-successful-session-count": NotRequired[int | str],
    "total-failure-session-count": NotRequired[int | str]})
TlsFailureDetailBody = TypedDict("TlsFailureDetailBody", {
    "result-type": NotRequired[str], "sending-mta-ip": NotRequired[str],
    "receiving-mx-hostname": NotRequired[str], "receiving-mx-helo": NotRequired[str],
    "receiving-ip": NotRequired[str], "failed-session-count": NotRequired[int | str],
    "additional-information": NotRequired[str], "failure-reason-code": NotRequired[str]})
TlsPolicyResultBody = TypedDict("TlsPolicyResultBody", {
    "policy": NotRequired[TlsPolicyBody], "summary": NotRequired[TlsSummaryBody],
    "failure-details": NotRequired[list[TlsFailureDetailBody]]})
TlsReportDetailBody = TypedDict("TlsReportDetailBody", {
    "organization-name": str, "date-range": TlsDateRangeBody, "contact-info": str | None,
    "report-id": str, "policies": list[TlsPolicyResultBody], "parse_warnings": list[str] | None,
    "authenticity": Authenticity, "signed_by": str, "authenticity_reason": str})
