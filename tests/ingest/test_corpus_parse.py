"""The shared corpus of real reports (RUA_CORPUS): every good file reads, every broken one is refused.

Message totals are checked against the <count> elements found in each document's text by a
regular expression here, independently of the parser.

Decision on the three element-order cases in aggregate_malformed/ (the MANIFEST allows either):
they are ACCEPTED. Their only fault is the order of elements (<spf> before <dkim> in
<auth_results>, <policy_published> after the records); the meaning is plain, real reporters
(Microsoft's) send <spf> first, and every value is read exactly. Each comes out with a warning
that names the order departure, so the report is kept and flagged, never silently "fixed".
"""
import re

from ingest.files import iter_documents
from ingest.model import Document, ReportError
from ingest.xml_report import parse

LIMITS = {"max_bytes": 64 * 1024 * 1024, "max_depth": 4}
ORDER_CASES = {"invalid-dkim-spf-seq.xml", "invalid-feedback-seq.xml", "invalid-spf-dkim-seq.xml"}
_COUNT = re.compile(rb"<(?:[\w.-]+:)?count>\s*(\d+)\s*</(?:[\w.-]+:)?count>")


def files_under(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file())


def counted(document: Document) -> int:
    with document.open() as stream:
        data = stream.read()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        data = data.decode("utf-16").encode("utf-8")
    return sum(int(n) for n in _COUNT.findall(data))


def read(document: Document) -> tuple[int, list[str]]:
    parsed = parse(document)
    total = sum(record.count for record in parsed.records)
    return total, parsed.warnings


def test_every_report_in_aggregate_reads_with_the_message_total_of_its_xml(corpus_dir):
    problems, reports = [], 0
    for path in files_under(corpus_dir / "aggregate"):
        results = list(iter_documents(str(path), **LIMITS))
        if not results:
            problems.append(f"{path}: no document found")
        for result in results:
            if not isinstance(result, Document):
                problems.append(f"refused: {result.reason}")
                continue
            try:
                total, _ = read(result)
            except ReportError as exc:
                problems.append(f"error: {exc}")
                continue
            reports += 1
            if total != counted(result):
                problems.append(f"{result.origin}: parsed {total} messages, the XML counts {counted(result)}")
    assert problems == []
    assert reports >= 300


def test_every_broken_file_in_aggregate_malformed_is_refused_with_a_reason_naming_it(corpus_dir):
    problems, refusals = [], 0
    for path in files_under(corpus_dir / "aggregate_malformed"):
        results = list(iter_documents(str(path), **LIMITS))
        for result in results:
            if not isinstance(result, Document):
                reason = result.reason
            elif path.name in ORDER_CASES:
                total, warnings = read(result)
                if total != counted(result) or not any("order" in w for w in warnings):
                    problems.append(f"{path}: order case read as {total} messages with {warnings}")
                continue
            else:
                try:
                    read(result)
                except ReportError as exc:
                    reason = str(exc)
                else:
                    problems.append(f"{result.origin}: read as a report")
                    continue
            refusals += 1
            if not reason.startswith(str(path)) or "\n" in reason or len(reason) < len(str(path)) + 10:
                problems.append(f"unclear reason for {path}: {reason!r}")
    assert problems == []
    assert refusals >= 20
