"""The report detail shape: the reporter's own field names, epoch integers in DateRange."""
from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import orjson
from orjson import Fragment

from rules import verdicts
from store.clock import stored_instant
from store.encoding import dumps
from store.report_queries import DetailRow, RecordWithSender, SenderRow


def _json(text):
    """A stored JSON column, passed through without parsing (None stays null)."""
    return None if text is None else Fragment(text)


class PerRecord:
    """A field of the detail holding one value per record, made by shape(record)."""

    def __init__(self, shape):
        self.shape = shape


def layout(report: DetailRow) -> list[tuple[str, object]]:
    """The detail's fields in the contract's order: a value, or PerRecord for a record array."""
    r = report
    return [
        ("Version", r.version),
        ("ReportMetadata", {
            "OrgName": r.org_name, "Email": r.email, "ExtraContactInfo": r.extra_contact_info,
            "ReportID": r.report_id, "DateRange": {"Begin": r.date_begin, "End": r.date_end},
            "Errors": _json(r.errors), "Generator": r.generator}),
        ("PolicyPublished", {
            "Domain": r.domain, "ADKIM": r.adkim, "ASPF": r.aspf, "P": r.p, "SP": r.sp,
            "NP": r.np, "PCT": r.pct, "FO": r.fo, "T": r.testing, "PSD": r.psd,
            "DiscoveryMethod": r.discovery_method}),
        ("Records", PerRecord(_record)),
        ("parse_warnings", _json(r.parse_warnings)),
        ("record_classifications", PerRecord(lambda record: record.classification)),
        ("record_evidence", PerRecord(_Explained())),
        ("record_alignment", PerRecord(lambda record: _json(record.alignment))),
        ("failure_summary", _json(r.failure_summary)),
        # Retention deleted the records (store/retention.py): the arrays above are empty.
        ("records_pruned_at", stored_instant(r.records_pruned_at)),
        *attested(r).items(),
    ]


def attested(report) -> dict:
    """What a report's (DMARC or TLS) mail proves of its origin: the detail's added fields."""
    return {"authenticity": report.authenticity, "signed_by": report.signed_by,
            "authenticity_reason": report.authenticity_reason}


def _record(r: RecordWithSender) -> dict:
    return {
        "Row": {"SourceIP": r.source_ip, "Count": r.count,
                "PolicyEvaluated": {"Disposition": r.disposition, "DKIM": r.dkim,
                                    "SPF": r.spf, "Reason": _json(r.reasons)}},
        "Identifiers": {"EnvelopeTo": r.envelope_to, "EnvelopeFrom": r.envelope_from,
                        "HeaderFrom": r.header_from},
        "AuthResults": {"DKIM": _json(r.auth_dkim), "SPF": _json(r.auth_spf)},
    }


class _Explained:
    """A record's evidence; records of one sender and outcome share it (a bounded cache)."""
    KEPT = 256

    def __init__(self):
        self.kept: dict = {}

    def __call__(self, r: RecordWithSender) -> dict:
        key = (r.dkim, r.spf, r.reasons, r.auth_dkim, r.auth_spf, r.alignment, r.sender)
        found = self.kept.get(key)
        if found is None:
            if len(self.kept) >= self.KEPT:
                self.kept.clear()
            found = self.kept[key] = _evidence(*key)
        return found


WRITE = 64 * 1024      # bytes handed to the server at a time


def detail_chunks(report: DetailRow, pages) -> Iterator[bytes]:
    """GET /reports/{id}'s body as JSON bytes, about WRITE bytes at a time: the server sends
    each piece in a write of its own, so a small report leaves in one write, not twenty."""
    buffer = bytearray()
    for piece in _pieces(report, pages):
        buffer += piece
        if len(buffer) >= WRITE:
            yield bytes(buffer)
            buffer.clear()
    yield bytes(buffer)


def _pieces(report: DetailRow, pages) -> Iterator[bytes]:
    """The body piece by piece: `pages` (iterable again, each time giving lists of RecordRows)
    is walked once per record array, so memory holds a page, not the report."""
    separator = b"{"
    for name, value in layout(report):
        if not isinstance(value, PerRecord):
            yield separator + dumps(name) + b":" + dumps(value)
        else:
            yield separator + dumps(name) + b":["
            first = True
            for page in pages:
                if page:
                    yield (b"" if first else b",") + dumps([value.shape(r) for r in page])[1:-1]
                    first = False
            yield b"]"
        separator = b","
    yield b"}"


def _evidence(dkim, spf, reasons, auth_dkim, auth_spf, alignment, sender: SenderRow) -> dict:
    """The rule that classified a record and its facts, with the sender its verdict used."""
    record = SimpleNamespace(dkim=dkim, spf=spf, reasons=_loads(reasons),
                             auth_dkim=_loads(auth_dkim), auth_spf=_loads(auth_spf))
    found = verdicts.sender(sender.kind, sender.abuse_status, sender.name)
    return verdicts.explain_record(record, _loads(alignment), found)


def _loads(text):
    return None if text is None else orjson.loads(text)
