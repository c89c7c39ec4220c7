"""The report detail shape: the reporter's own field names, epoch integers in DateRange."""
from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import orjson
from orjson import Fragment

from rules import verdicts
from store.encoding import dumps


def _json(text):
    """A stored JSON column, passed through without parsing (None stays null)."""
    return None if text is None else Fragment(text)


class PerRecord:
    """A field of the detail holding one value per record, made by shape(record)."""

    def __init__(self, shape):
        self.shape = shape


def _layout(report: tuple) -> list[tuple[str, object]]:
    """The detail's fields in the contract's order: a value, or PerRecord for a record array."""
    (version, org_name, email, extra_contact_info, report_id, date_begin, date_end, errors,
     generator, domain, adkim, aspf, p, sp, np, pct, fo, testing, psd, discovery_method,
     parse_warnings, failure_summary) = report
    return [
        ("Version", version),
        ("ReportMetadata", {
            "OrgName": org_name, "Email": email, "ExtraContactInfo": extra_contact_info,
            "ReportID": report_id, "DateRange": {"Begin": date_begin, "End": date_end},
            "Errors": _json(errors), "Generator": generator}),
        ("PolicyPublished", {
            "Domain": domain, "ADKIM": adkim, "ASPF": aspf, "P": p, "SP": sp, "NP": np,
            "PCT": pct, "FO": fo, "T": testing, "PSD": psd, "DiscoveryMethod": discovery_method}),
        ("Records", PerRecord(_record)),
        ("parse_warnings", _json(parse_warnings)),
        ("record_classifications", PerRecord(lambda r: r[12])),
        ("record_evidence", PerRecord(_Explained())),
        ("record_alignment", PerRecord(lambda r: _json(r[11]))),
        ("failure_summary", _json(failure_summary)),
    ]


def _record(r: tuple) -> dict:
    (source_ip, count, disposition, dkim, spf, reasons, envelope_to, envelope_from,
     header_from, auth_dkim, auth_spf) = r[:11]
    return {
        "Row": {"SourceIP": source_ip, "Count": count,
                "PolicyEvaluated": {"Disposition": disposition, "DKIM": dkim, "SPF": spf,
                                    "Reason": _json(reasons)}},
        "Identifiers": {"EnvelopeTo": envelope_to, "EnvelopeFrom": envelope_from,
                        "HeaderFrom": header_from},
        "AuthResults": {"DKIM": _json(auth_dkim), "SPF": _json(auth_spf)},
    }


class _Explained:
    """A record's evidence; records of one sender and outcome share it (a bounded memo)."""
    KEPT = 256

    def __init__(self):
        self.memo: dict = {}

    def __call__(self, r: tuple) -> dict:
        (dkim, spf, reasons, auth_dkim, auth_spf, alignment) = (r[3], r[4], r[5], r[9], r[10],
                                                                 r[11])
        key = (dkim, spf, reasons, auth_dkim, auth_spf, alignment, tuple(r[13:]))
        found = self.memo.get(key)
        if found is None:
            if len(self.memo) >= self.KEPT:
                self.memo.clear()
            found = self.memo[key] = _evidence(*key)
        return found


def report_detail(report: tuple, records) -> dict:
    """GET /reports/{id} from a queries.DETAIL_COLUMNS tuple and RECORD_COLUMNS tuples."""
    records = list(records)
    return {name: [value.shape(r) for r in records] if isinstance(value, PerRecord) else value
            for name, value in _layout(report)}


def detail_chunks(report: tuple, pages) -> Iterator[bytes]:
    """The same body as JSON bytes, a piece at a time: `pages` (iterable again, each time
    giving lists of RECORD_COLUMNS tuples) is walked once per record array, so memory holds
    a page, not the report."""
    separator = b"{"
    for name, value in _layout(report):
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


def _evidence(dkim, spf, reasons, auth_dkim, auth_spf, alignment, sender) -> dict:
    """The rule that classified a record and its facts, with the sender its verdict used
    (the Source row's slug, service kind, abuse status and name; None when there is no row)."""
    record = SimpleNamespace(dkim=dkim, spf=spf, reasons=_loads(reasons),
                             auth_dkim=_loads(auth_dkim), auth_spf=_loads(auth_spf))
    _slug, kind, status, name = sender or (None, None, None, None)
    return verdicts.explain_record(record, _loads(alignment), verdicts.sender(kind, status, name))


def _loads(text):
    return None if text is None else orjson.loads(text)
