"""Store one parsed report: routed, deduplicated, records streamed in batches, one transaction."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta

from peewee import IntegrityError

from ingest import rollups, routing
from ingest.bulk import insert_rows
from ingest.alignment import failure_summary, record_alignment
from ingest.classify import UNKNOWN_SENDER, classify
from ingest.model import ParsedReport, ReportError
from store import db
from store.clock import from_epoch, utcnow
from store.domain_names import InvalidDomain, normalize
from store.models import Domain, Organization, Record, Report

BATCH = 500
MAX_COUNT = 2**62          # per record and in total: far above any real report, inside BIGINT
MAX_SELECTORS = 100        # per domain: enough for any real signer, bounded against hostile input
_RECORD_FIELDS = ("report", "org", "ordinal", "source_ip", "count", "disposition", "dkim", "spf",
                  "reasons", "envelope_to", "envelope_from", "header_from", "auth_dkim",
                  "auth_spf", "alignment", "classification")
_SUMMARY_KEYS = ("spf_only", "dkim_only", "both", "total")


@dataclass
class Stored:
    """The outcome of store_report: status "stored" or "duplicate", and the Report row."""
    status: str
    report: Report


def dedupe_key(org_name: str, report_id: str, domain: str) -> str:
    """A resent report has the same reporter, ReportID and policy domain."""
    text = "\x00".join((org_name.strip(), report_id.strip(), domain))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def window_days(begin: int, end: int) -> tuple[date, date, date]:
    """(day_begin, day_end, rollup day): an end at 00:00:00 belongs to the day before."""
    try:
        first, last = from_epoch(begin), from_epoch(end)
        middle = from_epoch((begin + end) // 2)
    except (OverflowError, OSError, ValueError):
        raise ReportError(f"date range {begin}..{end} is not a usable time") from None
    day_end = last.date() - timedelta(days=1) if last.time() == last.min.time() else last.date()
    return first.date(), max(day_end, first.date()), middle.date()


def store_report(parsed: ParsedReport, *, org=None, received_at=None) -> Stored:
    """Route, dedupe and store one report; ReportError (nothing stored) when it cannot be."""
    meta = parsed.meta
    try:
        domain = normalize(meta.domain)
    except InvalidDomain as exc:
        raise ReportError(f"policy domain: {exc}") from None
    target = routing.find_org(org) if org is not None else routing.route(domain)
    key = dedupe_key(meta.org_name, meta.report_id, domain)
    existing = Report.get_or_none(Report.org == target, Report.dedupe_key == key)
    if existing is not None:
        return Stored("duplicate", existing)
    days = window_days(meta.date_begin, meta.date_end)
    try:
        with db.atomic():
            report = _store(parsed, target, domain, key, days, received_at or utcnow())
    except IntegrityError:
        # Another process stored the same report between our look-up and our insert.
        existing = Report.get_or_none(Report.org == target, Report.dedupe_key == key)
        if existing is None:
            raise
        return Stored("duplicate", existing)
    return Stored("stored", report)


def _store(parsed, org: Organization, domain: str, key: str, days, received_at) -> Report:
    meta = parsed.meta
    warnings: list[str] = []
    report = Report.create(**_fit(Report, warnings, dict(
        org=org, dedupe_key=key, version=meta.version, org_name=meta.org_name, email=meta.email,
        extra_contact_info=meta.extra_contact_info, report_id=meta.report_id,
        date_begin=meta.date_begin, date_end=meta.date_end, day_begin=days[0], day_end=days[1],
        errors=meta.errors, generator=meta.generator, domain=domain, adkim=meta.adkim,
        aspf=meta.aspf, p=meta.p, sp=meta.sp, np=meta.np, pct=meta.pct, fo=meta.fo,
        testing=meta.testing, psd=meta.psd, discovery_method=meta.discovery_method,
        received_at=received_at)))
    tally, selectors = rollups.Tally(), set()
    totals = _store_records(parsed, report, domain, tally, selectors, warnings)
    report.record_count, report.total_messages, report.compliant_messages, summary = totals
    report.compliance_rate = (round(100.0 * report.compliant_messages / report.total_messages, 2)
                              if report.total_messages else 0.0)
    report.failure_summary = summary
    report.parse_warnings = (list(parsed.warnings) + warnings) or None
    report.save()
    rollups.save_daily(org.id, domain, days[2], tally)
    policy = {"policy_p": report.p, "policy_pct": report.pct, "policy_testing": report.testing}
    rollups.save_domain_day(org.id, domain, days[2], report.total_messages, policy,
                            meta.date_end)
    _monitor(org, domain, selectors)
    (Organization.update(dirty_since=utcnow())
     .where(Organization.id == org.id, Organization.dirty_since.is_null()).execute())
    return report


def _store_records(parsed, report, domain, tally, selectors, warnings):
    """Insert records in batches as they stream; (records, messages, compliant, failure_summary)."""
    meta, fields = parsed.meta, [getattr(Record, name) for name in _RECORD_FIELDS]
    summary = dict.fromkeys(_SUMMARY_KEYS, 0)
    batch, rows, ordinal, messages, compliant = [], [], 0, 0, 0
    for record in parsed.records:
        if not 0 <= record.count <= MAX_COUNT:
            raise ReportError(f"record {ordinal + 1}: count {record.count} is out of range")
        alignment = record_alignment(record, meta.adkim, meta.aspf)
        verdict = classify(record, alignment, UNKNOWN_SENDER)
        values = _fit(Record, warnings, dict(
            source_ip=record.source_ip, disposition=record.disposition, dkim=record.dkim,
            spf=record.spf, envelope_to=record.envelope_to, envelope_from=record.envelope_from,
            header_from=record.header_from))
        rows.append((report.id, report.org_id, ordinal, values["source_ip"], record.count,
                     values["disposition"], values["dkim"], values["spf"], record.reasons,
                     values["envelope_to"], values["envelope_from"], values["header_from"],
                     record.auth_dkim, record.auth_spf, alignment, verdict))
        tally.add(values["source_ip"], record.count, record.dkim, record.spf, verdict)
        _collect_selectors(record.auth_dkim, domain, selectors)
        messages += record.count
        if record.dkim == "pass" or record.spf == "pass":
            compliant += record.count
        if messages > MAX_COUNT:
            raise ReportError("message counts add up beyond any real report")
        ordinal += 1
        batch.append(record)
        if len(rows) >= BATCH:
            _flush(rows, fields, batch, summary)
            rows, batch = [], []
    if rows:
        _flush(rows, fields, batch, summary)
    if not ordinal:
        raise ReportError("the report holds no <record>")
    return ordinal, messages, compliant, summary


def _flush(rows, fields, batch, summary):
    insert_rows(Record, fields, rows)
    for name, value in failure_summary(batch).items():
        summary[name] = summary.get(name, 0) + value


def _collect_selectors(auth_dkim, domain, selectors: set):
    """Selectors of signatures made with the policy domain itself (d= exactly the domain)."""
    for entry in auth_dkim or ():
        selector = (entry.get("Selector") or "").strip().lower()
        if (selector and len(selector) <= 253 and len(selectors) < MAX_SELECTORS
                and (entry.get("Domain") or "").strip().lower().rstrip(".") == domain):
            selectors.add(selector)


def _monitor(org, domain: str, selectors: set):
    """The policy domain joins the org's domains (auto, or both when added by hand)."""
    row = Domain.get_or_none(Domain.org == org, Domain.name == domain)
    if row is None:
        Domain.insert(org=org, name=domain, source="auto",
                      dkim_selectors=sorted(selectors)).on_conflict_ignore().execute()
        return
    known = list(row.dkim_selectors or [])
    room = max(0, MAX_SELECTORS - len(known))
    merged = known + sorted(s for s in selectors if s not in known)[:room]
    changes = {}
    if row.source == "manual":
        changes[Domain.source] = "both"
    if merged != known:
        changes[Domain.dkim_selectors] = merged
    if changes:
        Domain.update(changes).where(Domain.id == row.id).execute()


def _fit(model, warnings: list, values: dict) -> dict:
    """Cut text longer than its column (Postgres refuses it), with one warning per column."""
    for name, value in values.items():
        limit = getattr(getattr(model, name), "max_length", None)
        if value is None and limit and name not in ("org",):
            values[name] = "" if not model._meta.fields[name].null else None
        elif isinstance(value, str) and limit and len(value) > limit:
            values[name] = value[:limit]
            note = f"{name} was longer than {limit} characters and was shortened"
            if note not in warnings:
                warnings.append(note)
    return values
