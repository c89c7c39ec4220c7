"""Store one parsed TLS report: routed by its policy domains, deduplicated, one transaction."""
from __future__ import annotations

import io

from peewee import IntegrityError

from ingest import authenticity, copies, routing
from ingest.caps import Caps
from ingest.model import ReportError
from ingest.printable import bounded, report_named
from ingest.storing import Stored
from ingest.tls_report import RESULT_TYPES
from ingest.tls_report import ParsedTlsReport as Parsed
from rules.authenticity import NOT_FROM_MAIL, Provenance, speaks_for_reporter, unauthenticated
from rules.rates import rate
from rules.windows import window_days
from store import compiled as sql
from store import db, events, report_copies
from store.clock import utcnow
from store.models import Organization, TlsDay, TlsPolicy, TlsReport
from store.report_keys import content_digest, tls_dedupe_key

_SUMS = (TlsDay.reports, TlsDay.successful_sessions, TlsDay.failed_sessions)
# Where a domain's day sums the sessions of result types RFC 8460 does not name once it holds
# RUA_MAX_RESULT_TYPES types: reports from strangers cannot grow it (and health) without end.
OTHER = "other"


def route(parsed: Parsed) -> Organization:
    """The one organization monitoring the report's policy domains (ReportError otherwise):
    a domain nobody monitors is passed over while another one is monitored."""
    domains = parsed.domains
    if not domains:
        raise ReportError("unroutable: the TLS report names no policy domain; choose an "
                          "organization with --org")
    found: dict[str, Organization] = {}
    for domain in domains:
        try:
            org = routing.route(domain)
        except ReportError as exc:
            if str(exc).startswith("unroutable"):
                continue
            raise
        found[org.id] = org
    if not found:
        raise ReportError(f"unroutable: no organization monitors {', '.join(domains)}")
    if len(found) > 1:
        names = ", ".join(sorted(org.name for org in found.values()))
        raise ReportError(f"ambiguous: the TLS report's policy domains are monitored by several "
                          f"organizations ({names}); choose one with --org")
    return next(iter(found.values()))


def store_tls_report(parsed: Parsed, *, org=None, received_at=None, notes=(),
                     caps: Caps | None = None, provenance: Provenance = NOT_FROM_MAIL,
                     required: tuple[str, ...] = ()) -> Stored:
    """Route, dedupe and store one TLS report; ReportError (nothing stored) when it cannot be,
    a conflicting copy of a stored report kept aside (ingest/copies.py). caps (the defaults'
    when None) bound the result types a domain's day keeps by name; provenance: what its mail
    proves; required: RUA_REQUIRE_DKIM_FROM's domains, whose reports must be signed by them."""
    caps = caps or Caps.of()
    target = routing.find_org(org) if org is not None else route(parsed)
    key = tls_dedupe_key(parsed.org_name, parsed.report_id, parsed.date_begin, parsed.date_end)
    digest = content_digest(io.BytesIO(parsed.body.encode("utf-8", "surrogatepass")))
    now = received_at or utcnow()
    refusal = unauthenticated(required, provenance, parsed.contact_info, parsed.org_name, now)
    if refusal is not None:
        raise authenticity.refuse(target.id, parsed.domains[0] if parsed.domains else "",
                                  refusal, now)
    existing = _stored(target.id, key)
    if existing is not None:
        return _resent(existing, parsed, key, digest, now, provenance)
    try:
        days = window_days(parsed.date_begin, parsed.date_end)
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    try:
        with db.atomic():
            report = _store(parsed, target, key, digest, days, now, list(notes), provenance,
                            caps.result_types)
    except IntegrityError:
        # Another process stored the same report between our look-up and our insert.
        existing = _stored(target.id, key)
        if existing is None:
            raise
        return _resent(existing, parsed, key, digest, now, provenance)
    return Stored("stored", report)


def _stored(org_id: str, key: str) -> TlsReport | None:
    return TlsReport.get_or_none(TlsReport.org == org_id, TlsReport.dedupe_key == key)


def _resent(existing: TlsReport, parsed: Parsed, key: str, digest: str, now,
            provenance: Provenance) -> Stored:
    """A copy of a stored TLS report: a duplicate, a copy that takes the stored one's place
    (ingest/copies.py judges), or a conflicting copy kept aside."""
    judged = copies.judge(
        existing.content_digest, digest,
        speaks=speaks_for_reporter(provenance.authenticity, provenance.signed_by,
                                   parsed.contact_info),
        stored_speaks=speaks_for_reporter(existing.authenticity, existing.signed_by,
                                          existing.contact_info),
        chosen=lambda: report_copies.chosen(existing.org_id, "tlsrpt", key))
    if judged == copies.DUPLICATE:
        return Stored("duplicate", existing)
    copy = copies.Copy("tlsrpt", key, digest, parsed.org_name, parsed.report_id,
                       ", ".join(parsed.domains), parsed.date_begin, parsed.date_end)
    content = parsed.body.encode("utf-8", "surrogatepass")
    report_id = copies.arrived(copy, content, existing.org_id, described(existing),
                               f"/tls-reports/{existing.id}", provenance,
                               judged == copies.TAKES_PLACE, now)
    return Stored("stored", TlsReport.get_by_id(report_id))


def described(report: TlsReport) -> str:
    """A stored TLS report as a refusal or an event names it."""
    return (f"TLS report {report.id} ({report_named(report.org_name, report.report_id)} "
            f"for {bounded(', '.join(report.policy_domains))}, "
            f"{report.day_begin} to {report.day_end})")


def _store(parsed: Parsed, org: Organization, key: str, digest: str, days, received_at,
           notes, provenance: Provenance, max_types: int) -> TlsReport:
    total = parsed.successful + parsed.failed
    warnings = notes + parsed.warnings
    report = TlsReport.create(
        org=org.id, dedupe_key=key, content_digest=digest,
        org_name=_cut(parsed.org_name, 255, "organization-name", warnings),
        report_id=_cut(parsed.report_id, 255, "report-id", warnings),
        contact_info=_cut(parsed.contact_info, 320, "contact-info", warnings),
        date_begin=parsed.date_begin, date_end=parsed.date_end, day_begin=days[0],
        day_end=days[1], policy_domains=parsed.domains, successful_sessions=parsed.successful,
        failed_sessions=parsed.failed,
        success_rate=rate(parsed.successful, total),
        body=parsed.body, parse_warnings=warnings or None, received_at=received_at,
        **authenticity.columns(provenance))
    rows = [{"report": report.id, "org": org.id, "ordinal": ordinal,
             "policy_domain": _cut(policy.policy_domain, 253, "policy-domain", warnings),
             "policy_type": _cut(policy.policy_type, 32, "policy-type", warnings),
             "successful_sessions": policy.successful, "failed_sessions": policy.failed,
             "failures": policy.failures} for ordinal, policy in enumerate(parsed.policies)]
    if rows:
        TlsPolicy.insert_many(rows).execute()        # one statement: a report has few policies
    if warnings != (report.parse_warnings or []):
        report.parse_warnings = warnings
        report.save(only=[TlsReport.parse_warnings])
    for domain, policies in by_domain(parsed).items():
        _add_day(org.id, domain, days[2], policies, parsed.date_end, max_types)
    events.mark_dirty(org.id)
    return report


def by_domain(parsed: Parsed) -> dict[str, list]:
    """The report's policies by the domain whose day they count on."""
    grouped: dict[str, list] = {}
    for policy in parsed.policies:
        if policy.policy_domain and len(policy.policy_domain) <= 253:
            grouped.setdefault(policy.policy_domain, []).append(policy)
    return grouped


def _add_day(org_id: str, domain: str, day, policies: list, date_end: int, max_types: int):
    """Add the report's sessions for one domain to its TlsDay row (created when missing); past
    max_types result types, those RFC 8460 does not name are summed as OTHER."""
    key = [TlsDay.org, TlsDay.domain, TlsDay.day]
    successful, failed, added = day_sums(policies)
    empty = [TlsDay.failures, TlsDay.policy_types, TlsDay.last_report_end]
    sql.insert_rows(TlsDay, key + list(_SUMS) + empty,
                    [(org_id, domain, day, 1, successful, failed, {}, [], 0)],
                    conflict=key, add=list(_SUMS))
    row = TlsDay.get(TlsDay.org == org_id, TlsDay.domain == domain, TlsDay.day == day)
    failures = dict(row.failures or {})
    for kind, count in added.items():
        if kind not in failures and kind not in RESULT_TYPES and len(failures) >= max_types:
            kind = OTHER
        failures[kind] = failures.get(kind, 0) + count
    types = sorted(set(row.policy_types or []) | {p.policy_type for p in policies if p.policy_type})
    TlsDay.update(failures=failures, policy_types=types,
                  last_report_end=max(row.last_report_end, date_end)).where(
        TlsDay.id == row.id).execute()


def day_sums(policies: list) -> tuple[int, int, dict[str, int]]:
    """One domain's policies summed for its day: successful, failed, failed by result type."""
    failures: dict[str, int] = {}
    for policy in policies:
        for kind, count in policy.failures.items():
            failures[kind] = failures.get(kind, 0) + count
    return (sum(p.successful for p in policies), sum(p.failed for p in policies), failures)


def _cut(text: str, limit: int, name: str, warnings: list) -> str:
    """Text longer than its column, shortened with a warning (Postgres refuses it whole)."""
    if len(text) <= limit:
        return text
    warnings.append(f"{name} was longer than {limit} characters and was shortened")
    return text[:limit]
