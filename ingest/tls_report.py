"""Read one SMTP TLS report (RFC 8460 JSON) into plain values; pure, no database and no I/O.

What real reporters send departs from the RFC in small ways; each departure read anyway is
kept as one parse warning: a date without a time zone (taken as UTC), a missing contact-info,
numbers written as strings, a policy-string or mx-host given as a string, an upper-case
policy-type, a result type RFC 8460 does not name, an empty policies list, failure details
that do not add up to the summary. A document that names no reporter, report id or date range
is not a report (ReportError), nor is one past a cap (ingest/caps.py; the JSON is read under
them by ingest/tls_json.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from ingest import tls_json
from ingest.caps import Caps, epoch_in_range
from ingest.model import ReportError

# RFC 8460 section 4.3's result types, with a label to show and what to fix (the action item).
RESULT_TYPES = {
    "starttls-not-supported": ("STARTTLS not supported",
                               "offer STARTTLS on every MX host the policy names"),
    "certificate-host-mismatch": ("Certificate does not match the host",
                                  "serve a certificate naming the MX host (or fix the MX "
                                  "patterns of the MTA-STS policy)"),
    "certificate-expired": ("Certificate expired", "renew the MX host's certificate"),
    "certificate-not-trusted": ("Certificate not trusted",
                                "serve a certificate from a public CA with its full chain"),
    "validation-failure": ("Validation failure",
                           "check the MX host's certificate chain and the policy's MX names"),
    "tlsa-invalid": ("TLSA record invalid", "publish TLSA records matching the MX certificate"),
    "dnssec-invalid": ("DNSSEC invalid", "repair the DNSSEC chain of the MX host's zone"),
    "dane-required": ("DANE required but not usable",
                      "publish valid TLSA records under a signed zone"),
    "sts-policy-fetch-error": ("MTA-STS policy could not be fetched",
                               "serve https://mta-sts.<domain>/.well-known/mta-sts.txt with a "
                               "valid certificate"),
    "sts-policy-invalid": ("MTA-STS policy invalid", "correct the MTA-STS policy file's syntax"),
    "sts-webpki-invalid": ("MTA-STS policy host's certificate invalid",
                           "serve the mta-sts host with a valid public certificate"),
}
POLICY_TYPES = ("sts", "tlsa", "no-policy-found")
_KEYS = ("organization-name", "date-range", "report-id", "policies")
# Warnings kept of one report: each policy may earn several, and a report may name many policies.
MAX_WARNINGS = 50


@dataclass
class ParsedTlsPolicy:
    """One entry of `policies`: the policy applied, its session counts, failures by result type."""
    policy_type: str
    policy_domain: str                  # as written, lower-cased, without a trailing dot
    successful: int
    failed: int
    failures: dict[str, int] = field(default_factory=dict)   # result type -> failed sessions


@dataclass
class ParsedTlsReport:
    """A parsed TLS report; body is its JSON text, compact (or as received, if shorter)."""
    origin: str
    org_name: str
    report_id: str
    contact_info: str
    date_begin: int                     # epoch seconds, UTC
    date_end: int
    policies: list[ParsedTlsPolicy]
    body: str
    warnings: list[str] = field(default_factory=list)

    @property
    def successful(self) -> int:
        return sum(p.successful for p in self.policies)

    @property
    def failed(self) -> int:
        return sum(p.failed for p in self.policies)

    @property
    def domains(self) -> list[str]:
        """The policy domains named, each once, in the report's order."""
        return list(dict.fromkeys(p.policy_domain for p in self.policies if p.policy_domain))


def looks_like_tls_report(data: bytes) -> bool:
    """JSON text naming at least two of RFC 8460's top-level keys (cheap: the first 64 KiB)."""
    head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return False
    return sum(f'"{key}"'.encode() in head for key in _KEYS) >= 2


def parse(data: bytes, origin: str, caps: Caps | None = None) -> ParsedTlsReport:
    """The report in data (UTF-8 JSON), or ReportError naming why it is not one or which cap
    (caps: the defaults' when None) it passes."""
    caps = caps or Caps.of()
    try:
        document, body = tls_json.loads(data, caps)
        return _report(document, body, origin, caps)
    except ReportError as exc:
        raise ReportError(f"TLS report: {exc}") from None


def _report(document, body: str, origin: str, caps: Caps) -> ParsedTlsReport:
    if not isinstance(document, dict):
        raise ReportError("the JSON is not an object")
    warnings: list[str] = []
    org_name = _required_text(document, "organization-name")
    report_id = _required_text(document, "report-id")
    begin, end = _date_range(document.get("date-range"), warnings)
    contact = document.get("contact-info")
    if not isinstance(contact, str) or not contact.strip():
        warnings.append("contact-info is missing")
        contact = ""
    policies = document.get("policies")
    if not isinstance(policies, list):
        raise ReportError("policies is not a list")
    if not policies:
        warnings.append("policies is empty: the report counts no sessions")
    parsed = [_policy(number, entry, warnings) for number, entry in enumerate(policies, 1)]
    _within(parsed, caps)
    if len(warnings) > MAX_WARNINGS:
        warnings[MAX_WARNINGS:] = [f"and {len(warnings) - MAX_WARNINGS:,} more warnings"]
    return ParsedTlsReport(origin, org_name, report_id, contact.strip(), begin, end, parsed, body,
                     warnings)


def _within(policies: list, caps: Caps) -> None:
    """The report's sessions, and its failure details' sessions, each at most the cap: so no
    sum of a day's (or a source's) reports can pass what the store's integers hold."""
    sessions = sum(p.successful + p.failed for p in policies)
    detailed = sum(sum(p.failures.values()) for p in policies)
    if max(sessions, detailed) > caps.report_sessions:
        raise caps.exceeded("report_sessions", "sessions")


def _required_text(document: dict, key: str) -> str:
    value = document.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ReportError(f"{key} is missing")
    return value.strip()


def _date_range(value, warnings: list) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise ReportError("date-range is missing")
    begin = _moment(value.get("start-datetime"), "start-datetime", warnings)
    end = _moment(value.get("end-datetime"), "end-datetime", warnings)
    if end < begin:
        raise ReportError("date-range ends before it starts")
    return begin, end


def _moment(value, name: str, warnings: list) -> int:
    """Epoch seconds of an RFC 3339 time; one without a zone is read as UTC, with a warning."""
    if not isinstance(value, str):
        raise ReportError(f"date-range {name} is missing")
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" else text)
    except ValueError:
        raise ReportError(f"date-range {name} {text[:40]!r} is not a time") from None
    if moment.tzinfo is None:
        warnings.append(f"date-range {name} has no time zone; read as UTC")
        moment = moment.replace(tzinfo=timezone.utc)
    return epoch_in_range(int(moment.timestamp()), f"date-range {name} {text[:40]!r}")


def result_label(kind: str) -> str:
    """The result type's label; an unknown one is shown as written."""
    return RESULT_TYPES[kind][0] if kind in RESULT_TYPES else kind


def _policy(number: int, entry, warnings: list) -> ParsedTlsPolicy:
    if not isinstance(entry, dict):
        raise ReportError(f"policies[{number}] is not an object")
    policy = entry.get("policy") if isinstance(entry.get("policy"), dict) else {}
    where = f"policies[{number}]"
    kind = str(policy.get("policy-type") or "").strip()
    if kind.lower() != kind:
        warnings.append(f"{where} policy-type {kind[:40]!r} is not lower-case")
        kind = kind.lower()
    if kind not in POLICY_TYPES:
        warnings.append(f"{where} policy-type {kind[:40]!r} is not one of RFC 8460's")
    domain = str(policy.get("policy-domain") or "").strip().lower().rstrip(".")
    if not domain:
        warnings.append(f"{where} has no policy-domain")
    for key in ("policy-string", "mx-host"):
        if isinstance(policy.get(key), str):
            warnings.append(f"{where} {key} is a string, not a list")
    summary = entry.get("summary") if isinstance(entry.get("summary"), dict) else {}
    if not summary:
        warnings.append(f"{where} has no summary")
    successful = _count(summary, "total-successful-session-count", where, warnings)
    failed = _count(summary, "total-failure-session-count", where, warnings)
    failures = _failures(entry.get("failure-details"), where, warnings)
    if failures and sum(failures.values()) != failed:
        warnings.append(f"{where} failure-details add up to {sum(failures.values())} failed "
                        f"sessions, the summary says {failed}")
    return ParsedTlsPolicy(kind, domain, successful, failed, failures)


def _failures(details, where: str, warnings: list) -> dict[str, int]:
    """Failed sessions summed by result type, most first (ties by name)."""
    if details is None:
        return {}
    if not isinstance(details, list):
        warnings.append(f"{where} failure-details is not a list; ignored")
        return {}
    sums: dict[str, int] = {}
    for number, detail in enumerate(details, 1):
        place = f"{where} failure-details[{number}]"
        if not isinstance(detail, dict):
            warnings.append(f"{place} is not an object; ignored")
            continue
        kind = tls_json.result_type(detail)
        if kind not in RESULT_TYPES:
            warnings.append(f"{place} result-type {kind[:40]!r} is not one of RFC 8460's")
        sums[kind] = sums.get(kind, 0) + _count(detail, "failed-session-count", place, warnings)
    return dict(sorted(sums.items(), key=lambda item: (-item[1], item[0])))


def _count(values: dict, key: str, where: str, warnings: list) -> int:
    """A non-negative session count; a number in a string is read, anything else is 0."""
    value = values.get(key)
    if isinstance(value, bool):
        value = None
    if isinstance(value, int) and value >= 0:
        return value
    text = value.strip() if isinstance(value, str) else ""
    if text.isascii() and text.isdigit() and len(text) <= 18:   # "²" is a digit, not a count
        warnings.append(f"{where} {key} is a string")
        return int(text)
    warnings.append(f"{where} {key} is missing or not a count; read as 0")
    return 0
