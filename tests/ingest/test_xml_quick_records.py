"""The quick record reader gives what the careful path gives: records, warnings, refusals."""
import io
import pathlib

import pytest

from ingest import xml_quick_records
from ingest.files import iter_documents
from ingest.model import Document, RefusedInput, ReportError
from ingest.xml_report import parse
from tests.ingest import xmlbuild as xb
from tests.ingest.test_xml_report import WARNINGS
from tests.ingest.xmlbuild import OMIT


def outcome(document: Document):
    """(meta, records, warnings) of a document, or the refusal's message."""
    try:
        parsed = parse(document)
        records = list(parsed.records)
    except ReportError as exc:
        return str(exc)
    return parsed.meta, records, list(parsed.warnings)


def both_ways(document: Document, monkeypatch):
    """The outcome with the quick reader, then with every record left to the careful path."""
    quick = outcome(document)
    with monkeypatch.context() as patch:
        patch.setattr(xml_quick_records.QuickRecords, "read", lambda self, element: None)
        careful = outcome(document)
    return quick, careful


def document(text) -> Document:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return Document("report.xml", lambda: io.BytesIO(data))


EMPTY_AUTH = [{"domain": "", "selector": "", "result": ""}]
RECORDS = {
    "a plain record": [xb.record()],
    "empty auth values, noted dkim first": [xb.record(
        auth_dkim=EMPTY_AUTH, auth_spf=[{"domain": "", "scope": "", "result": ""}])],
    "empty envelope values after auth ones": [xb.record(
        envelope_from="", auth_spf=[{"domain": "", "result": "pass"}],
        identifiers={"header_from": "example.com", "envelope_to": "", "envelope_from": ""})],
    "an empty header_from": [xb.record(header_from="")],
    "reasons with and without comments": [xb.record(
        reasons=[{"type": "mailing_list", "comment": ""}, {"type": "other", "comment": "x"}])],
    "a reason with only a comment": [xb.record(reasons=[{"comment": "why"}])],
    "a reason with an empty type": [xb.record(reasons=[{"type": "", "comment": "why"}])],
    "an unknown reason type": [xb.record(reasons=[{"type": "bulk"}])],
    "human results, empty or not": [xb.record(
        auth_dkim=[{"domain": "example.com", "result": "pass", "human_result": ""}],
        auth_spf=[{"domain": "example.com", "result": "fail", "human_result": "no"}])],
    "no auth_results": [xb.record(auth_results=OMIT)],
    "several signatures": [xb.record(auth_dkim=[
        {"domain": "example.com", "selector": "a", "result": "pass"},
        {"domain": "", "selector": "b", "result": "fail"}])],
    "upper-case values": [xb.record(dkim="PASS", auth_spf=[{"domain": "x.example",
                                                           "result": "Pass"}])],
    "a non-standard result": [xb.record(auth_dkim=[{"domain": "x.example", "result": "weird"}])],
    "an IPv6 source and a bad one": [xb.record(source_ip="2001:db8::1"),
                                     xb.record(source_ip="300.1.1.1")],
    "a count with a decimal point": [xb.record(count="3.0")],
    "a negative count": [xb.record(count=-1)],
    "a count that is not a number": [xb.record(count="many")],
    "two rows": [xb.record(row=[{"source_ip": "192.0.2.1", "count": 1}] * 2)],
    "an unknown element in a row": [xb.record(row={
        "source_ip": "192.0.2.1", "count": 1, "extra": 1,
        "policy_evaluated": {"disposition": "none", "dkim": "pass", "spf": "pass"}})],
    "a leaf holding an element": [xb.record(source_ip={"b": "192.0.2.1"})],
    "a missing disposition": [xb.record(disposition=OMIT)],
    "records that warn and records that do not": [
        xb.record(auth_dkim=EMPTY_AUTH), xb.record(), xb.record(spf="softfail"), xb.record()],
}


@pytest.mark.parametrize("version", ["rfc7489", "rfc9990"])
@pytest.mark.parametrize("records", list(RECORDS.values()), ids=list(RECORDS))
def test_the_quick_reader_agrees_with_the_careful_path(records, version, monkeypatch):
    quick, careful = both_ways(document(xb.report(records, version=version)), monkeypatch)
    assert quick == careful


@pytest.mark.parametrize("text", [w[1] for w in WARNINGS], ids=[w[0] for w in WARNINGS])
def test_every_tolerated_departure_reads_the_same_either_way(text, monkeypatch):
    quick, careful = both_ways(document(text), monkeypatch)
    assert quick == careful


def test_every_corpus_file_reads_the_same_either_way(corpus_dir, monkeypatch):
    read, quick_reads = xml_quick_records.QuickRecords.read, []

    def counted(self, element):
        record = read(self, element)
        quick_reads.append(record is not None)
        return record
    monkeypatch.setattr(xml_quick_records.QuickRecords, "read", counted)
    compared = 0
    for path in sorted(pathlib.Path(corpus_dir).rglob("*")):
        if not path.is_file():
            continue
        for item in iter_documents(str(path), max_bytes=50 * 2**20, max_depth=3):
            if isinstance(item, RefusedInput):
                continue
            quick, careful = both_ways(item, monkeypatch)
            assert quick == careful, item.origin
            compared += 1
    assert compared > 0 and any(quick_reads)     # the quick reader did read corpus records
