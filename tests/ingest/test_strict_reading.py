"""Reading the bytes as they are first, repairing only when needed, changes no outcome."""
import pathlib

import pytest

from ingest import xml_report
from ingest.files import iter_documents
from ingest.model import Document, RefusedInput
from ingest.storing import store_report
from store.models import Record
from ingest.xml_report import parse
from ingest.xml_text import CHUNK, NeedsRepair
from tests.factories import make_org
from tests.ingest import xmlbuild as xb
from tests.ingest.test_hostile import MB, stream_large
from tests.ingest.test_xml_quick_records import document, outcome
from tests.ingest.test_xml_report import REFUSALS, WARNINGS


def both_ways(document: Document, monkeypatch):
    """The outcome as parse reads it, then with the repairing pass from the first byte."""
    def repair_at_once(*args):
        raise NeedsRepair("test")
        yield
    first = outcome(document)
    with monkeypatch.context() as patch:
        patch.setattr(xml_report, "strict_chunks", repair_at_once)
        repaired = outcome(document)
    return first, repaired


def many(count: int = 1200, late: dict | None = None, at: int = 1000) -> str:
    """A report of count records, each from its own address; record `at` takes `late`."""
    return xb.report([xb.record(source_ip=f"10.0.{n // 256}.{n % 256}",
                                **(late if n == at and late else {})) for n in range(count)])


def before_record(text: str, number: int, insert: str) -> str:
    """text with insert put just before its record `number` (counted from 0)."""
    at = -1
    for _ in range(number + 1):
        at = text.index("<record>", at + 1)
    return text[:at] + insert + text[at:]


LATE = {
    "a stray < in a value": many(late={"envelope_from": "a<b.example"}),
    "a control character": many(late={"envelope_from": "a\x01b.example"}),
    "a comment holding a <": before_record(many(), 1000, "<!-- 1 < 2 -->"),
    "a CDATA value holding a <": many(late={"envelope_from": "<![CDATA[a<b.example]]>"}),
    "a name with two prefixes, only raised at the end": many(
        late={"envelope_from": "<b:c:d>1</b:c:d>"}),
    "an undefined prefix, only raised at the end": many(late={"envelope_from": "<x:y>1</x:y>"}),
    "a non-ASCII value": many(late={"envelope_from": "é.example"}),
    "a non-ASCII name, which XML allows and the repair escapes": many(
        late={"envelope_from": "<é>1</é>"}),
    "windows-1252": many(late={"envelope_from": "é.example"}).replace(
        'encoding="UTF-8"', 'encoding="windows-1252"').encode("cp1252"),
    "a byte that is not UTF-8": many(late={"envelope_from": "bad_X"}).encode().replace(b"_X", b"\x91"),
    "a DOCTYPE after records": before_record(many(), 1000, "<!DOCTYPE x>"),
    "a processing instruction holding a <": before_record(many(), 1000, "<?pi 1 < 2?>"),
    "a truncated end": many()[:-40],
    "a mismatched tag": many(late={"envelope_from": "<b>x</c>"}),
    "a warning in a record before the repair": many(late={"envelope_from": "a<b.example"}).replace(
        "<source_ip>10.0.0.5</source_ip>", "<source_ip></source_ip>"),
}


@pytest.mark.parametrize("text", list(LATE.values()), ids=list(LATE))
def test_trouble_after_records_were_handed_out_reads_as_the_repairing_pass_reads_it(
        text, monkeypatch):
    assert len(text) > 2 * CHUNK       # records are handed out before the trouble is met
    first, repaired = both_ways(document(text), monkeypatch)
    assert first == repaired
    if not isinstance(first, str):
        addresses = [record.source_ip for record in first[1]]
        assert len(addresses) == len(set(addresses)) == 1200     # none twice, none lost


def test_a_tag_too_long_to_wait_for_across_chunks_reads_as_the_repairing_pass_reads_it(
        monkeypatch):
    text = many()
    start = CHUNK - 8500                # more than HOLD_LIMIT before the first chunk ends
    cut = text.rindex("</record>", 0, start - 300) + len("</record>")
    long_tag = f'<x a="{"v" * 9000}">1</x>'
    text = text[:cut] + " " * (start - cut) + long_tag + text[cut:]
    assert text.index(long_tag) == start
    first, repaired = both_ways(document(text), monkeypatch)
    assert first == repaired


@pytest.mark.parametrize("text", [w[1] for w in WARNINGS] + [r[1] for r in REFUSALS],
                         ids=[w[0] for w in WARNINGS] + [r[0] for r in REFUSALS])
def test_every_departure_and_refusal_reads_the_same_either_way(text, monkeypatch):
    first, repaired = both_ways(document(text), monkeypatch)
    assert first == repaired


def test_every_corpus_document_reads_the_same_either_way(corpus_dir, monkeypatch):
    compared = 0
    for kind in ("aggregate", "aggregate_malformed"):
        for path in sorted((pathlib.Path(corpus_dir) / kind).rglob("*")):
            if not path.is_file():
                continue
            for item in iter_documents(str(path), max_bytes=50 * MB, max_depth=3):
                if not isinstance(item, RefusedInput):
                    first, repaired = both_ways(item, monkeypatch)
                    assert first == repaired, item.origin
                    compared += 1
    assert compared > 0


@pytest.mark.slow
def test_a_50000_record_report_repaired_at_its_end_streams_once_with_flat_memory(tmp_path):
    size, records, _, addresses, warnings, growth_kb = stream_large(
        tmp_path / "large.xml", {"envelope_from": "a<b.example"})
    assert (records, addresses, warnings) == (50_000, 50_000, 1)    # the one '<' repaired
    assert size > 20 * MB and growth_kb * 1024 < size / 2


def test_a_report_repaired_after_records_were_stored_keeps_each_record_once(database):
    parsed = parse(document(many(late={"envelope_from": "a<b.example"})))
    stored = store_report(parsed, org=make_org())
    rows = Record.select(Record.ordinal, Record.source_ip, Record.envelope_from).order_by(
        Record.ordinal).tuples()
    assert [ordinal for ordinal, _, _ in rows] == list(range(1200))
    assert len({address for _, address, _ in rows}) == 1200
    assert rows[1000][2] == "a<b.example"
    assert stored.report.parse_warnings == [
        "an unescaped '<' in a value was read as a literal character"]
