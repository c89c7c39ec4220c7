"""`rua report replace`: a kept copy put in place of the stored report under its key, and the
stored one kept aside in its turn, so replacing again undoes it.

The stored report is taken out (its figures subtracted by store/report_removal.py from the sums
ingest's own code makes of it) and the copy is read again and stored by the same code as any
report that arrives; all in one transaction, which a dry run rolls back after reading the
figures it would leave. The operator's choice stands: a later arrival of either copy is a
duplicate or a kept copy (ingest/copies.py).
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from typing import NamedTuple

from ingest import authenticity, storing, tls_report, tls_storing, xml_report
from ingest.model import Document, ParsedRecord, ParsedReport, ReportError, ReportMeta
from ingest.rollups import ReportTally
from rules.rates import percentage
from rules.windows import window_days
from store import events, report_copies, report_removal
from store.encoding import dumps, loads
from store.models import Record, Report, ReportCopy, TlsReport
from store.report_keys import content_digest

_META = [name for name in ReportMeta.__dataclass_fields__]
_RECORD = [name for name in ParsedRecord.__dataclass_fields__]


class Figure(NamedTuple):
    name: str
    before: int
    after: int


@dataclass(frozen=True)
class Swap:
    """What a replace did, or (dry run) would do."""
    copy: ReportCopy             # the copy put in place
    replaced: str                # the stored report taken out, as named ("" when none was)
    stored_id: str               # the report stored from the copy
    kept_id: int | None          # the copy the replaced report is kept as: replace it to undo
    figures: list[Figure]
    done: bool


class _DryRun(Exception):
    def __init__(self, swap: Swap):
        super().__init__("dry run")
        self.swap = swap


def replace(copy_id: int, *, apply: bool, max_records: int | None = None) -> Swap:
    """Put kept copy `copy_id` in place of the stored report (apply=False: only say what
    would change); ReportError with the reason when it cannot be."""
    copy = report_copies.find(copy_id)
    if copy is None:
        raise ReportError(f"no kept copy {copy_id} (`rua report copies ORG` lists them)")
    try:
        with storing.writing():
            swap = _swap(copy, max_records)
            if not apply:
                raise _DryRun(swap)
    except _DryRun as dry_run:
        return dry_run.swap
    return swap


def _swap(copy: ReportCopy, max_records) -> Swap:
    model = Report if copy.kind == "dmarc" else TlsReport
    stored = model.get_or_none(model.org == copy.org_id, model.dedupe_key == copy.dedupe_key)
    before, replaced, kept_id = [], "", None
    if stored is not None:
        before, replaced = _figures(stored), _named(stored)
        kept_id = _take_out(copy, stored)
    content = report_copies.content(copy)
    if copy.kind == "dmarc":
        now = _store_dmarc(copy, content, max_records)
    else:
        parsed = tls_report.parse(content, f"copy {copy.id}")
        now = tls_storing.store_tls_report(parsed, org=copy.org_id, received_at=copy.received_at,
                                           provenance=authenticity.of_row(copy)).report
    report_copies.remove(copy)
    events.mark_dirty(copy.org_id)
    after = _figures(now)
    figures = [Figure(name, dict(before).get(name, 0), value) for name, value in after]
    return Swap(copy, replaced, now.id, kept_id, figures, done=True)


def _take_out(copy: ReportCopy, stored) -> int:
    """Keep the stored report aside (reason "replaced") and take it out; the copy it is kept as."""
    if copy.kind == "dmarc":
        if stored.records_pruned_at is not None:
            raise ReportError(
                f"{_named(stored)} cannot be replaced: retention deleted its records on "
                f"{stored.records_pruned_at:%Y-%m-%d} (records_pruned_at), so its figures "
                f"cannot be taken out exactly; it stays as it is")
        records = list(Record.select().where(Record.report == stored.id)
                       .order_by(Record.ordinal))
        content, form = _rows(stored, records), "stored"
        domain = stored.domain
    else:
        content, form = stored.body.encode("utf-8", "surrogatepass"), "received"
        domain = ", ".join(stored.policy_domains)
    digest = stored.content_digest or content_digest(io.BytesIO(content))
    kept = report_copies.keep(copy.org_id, copy.kind, copy.dedupe_key, digest, content,
                              org_name=stored.org_name, report_id=stored.report_id,
                              domain=domain, date_begin=stored.date_begin,
                              date_end=stored.date_end, received_at=stored.received_at,
                              form=form, reason="replaced",
                              attested=authenticity.columns(authenticity.of_row(stored)))
    day = window_days(stored.date_begin, stored.date_end)[2]
    if copy.kind == "dmarc":
        tally = ReportTally()
        for r in records:
            tally.add(r.source_ip, r.count, r.dkim, r.spf, r.classification, r.disposition)
        report_removal.remove_report(stored, day, tally.in_address_order(), tally.dispositions,
                                     percentage)
    else:
        parsed = tls_report.parse(content, f"TLS report {stored.id}")
        sums = {domain: tls_storing.day_sums(policies)
                for domain, policies in tls_storing.by_domain(parsed).items()}
        report_removal.remove_tls_report(stored, day, sums)
    return kept.id


def _store_dmarc(copy: ReportCopy, content: bytes, max_records) -> Report:
    """The DMARC copy read again (its XML, or the rows of a report rua set aside) and stored."""
    if copy.form == "stored":
        parsed = _parsed_rows(copy, content)
    else:
        document = Document(f"copy {copy.id}", lambda: io.BytesIO(content))
        parsed = xml_report.parse(document, max_records=max_records)
        parsed.digest = copy.content_digest
    try:
        return storing.store_report(parsed, org=copy.org_id, received_at=copy.received_at,
                                    provenance=authenticity.of_row(copy)).report
    finally:
        close = getattr(parsed.records, "close", None)
        if close is not None:
            close()


def _rows(report: Report, records: list[Record]) -> bytes:
    """A stored DMARC report as the values it was stored from, JSON (rua keeps no XML)."""
    return dumps({"meta": {name: getattr(report, name) for name in _META},
                  "records": [{name: getattr(r, name) for name in _RECORD} for r in records],
                  "warnings": report.parse_warnings or []})


def _parsed_rows(copy: ReportCopy, content: bytes) -> ParsedReport:
    values = loads(content)
    records = (ParsedRecord(**record) for record in values["records"])
    return ParsedReport(f"copy {copy.id}", ReportMeta(**values["meta"]), records,
                        list(values["warnings"]), copy.content_digest)


def _figures(report) -> list[tuple[str, int]]:
    if isinstance(report, Report):
        return [("messages", report.total_messages), ("compliant", report.compliant_messages),
                ("records", report.record_count)]
    return [("successful sessions", report.successful_sessions),
            ("failed sessions", report.failed_sessions)]


def _named(report) -> str:
    if isinstance(report, Report):
        return storing.described(report)
    return tls_storing.described(report)
