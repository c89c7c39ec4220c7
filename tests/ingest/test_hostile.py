"""Hostile input: entity expansion, external entities and DTDs, bombs, deep nesting, huge reports."""
import io
import subprocess
import sys
import textwrap
import time
import tracemalloc
import zipfile
import zlib

import pytest

from ingest.files import iter_documents
from ingest.model import Document, RefusedInput, ReportError
from ingest.xml_report import parse
from tests.ingest import xmlbuild as xb

MB = 1 << 20
XML = xb.report_bytes()


def found(path, *, max_bytes=MB, max_depth=4):
    return list(iter_documents(str(path), max_bytes=max_bytes, max_depth=max_depth))


def parse_text(text: str):
    data = text.encode()
    parsed = parse(Document("hostile.xml", lambda: io.BytesIO(data)))
    return parsed, list(parsed.records)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE feedback [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
""" + xb.report(org_name="&lol9;", declaration="")


def test_billion_laughs_is_refused_without_expanding_anything():
    started = time.monotonic()
    with pytest.raises(ReportError, match="DOCTYPE"):
        parse_text(BILLION_LAUGHS)
    assert time.monotonic() - started < 2


def test_an_external_entity_never_reads_a_local_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    text = (f'<?xml version="1.0"?>\n<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
            + xb.report(org_name="&xxe;", declaration=""))
    with pytest.raises(ReportError) as caught:
        parse_text(text)
    assert "DOCTYPE" in str(caught.value) and "TOP-SECRET" not in str(caught.value)


def test_an_external_dtd_is_refused_not_fetched():
    text = ('<?xml version="1.0"?>\n<!DOCTYPE feedback SYSTEM "http://127.0.0.1:9/dmarc.dtd">\n'
            + xb.report(declaration=""))
    with pytest.raises(ReportError, match="DOCTYPE"):
        parse_text(text)


def test_a_doctype_hidden_after_a_long_comment_is_still_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    text = ("<!--" + "x" * 600_000 + "-->\n"
            f'<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
            + xb.report(org_name="&xxe;", declaration=""))
    with pytest.raises(ReportError) as caught:
        parse_text(text)
    assert "DOCTYPE" in str(caught.value) and "TOP-SECRET" not in str(caught.value)


def test_an_entity_reference_without_a_definition_is_refused():
    with pytest.raises(ReportError, match="not well-formed"):
        parse_text(xb.report(org_name="&xxe;"))


def _zeros_deflated(size: int) -> bytes:
    """A gzip stream of `size` zero bytes, compressed without holding them in memory."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(MB)
    parts = [compressor.compress(block) for _ in range(size // MB)]
    return b"".join(parts) + compressor.flush()


def test_a_gzip_bomb_is_refused_at_the_cap_with_little_memory(tmp_path):
    (tmp_path / "bomb.xml.gz").write_bytes(_zeros_deflated(64 * MB))
    tracemalloc.start()
    try:
        [refused] = found(tmp_path / "bomb.xml.gz", max_bytes=2 * MB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(refused, RefusedInput) and "limit" in refused.reason
    assert peak < 8 * MB


def test_a_zip_bomb_is_refused_at_the_cap_with_little_memory(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("report.xml", "w", force_zip64=True) as member:
            block = bytes(MB)
            for _ in range(64):
                member.write(block)
    tracemalloc.start()
    try:
        [refused] = found(path, max_bytes=2 * MB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(refused, RefusedInput) and "limit" in refused.reason and "report.xml" in refused.reason
    assert peak < 8 * MB


@pytest.mark.parametrize("layers, readable", [(4, True), (5, False)])
def test_archives_nested_deeper_than_the_limit_are_refused(tmp_path, layers, readable):
    data = XML
    for layer in range(layers):
        data = xb.gzipped(data) if layer % 2 == 0 else xb.zipped({f"layer{layer}": data})
    (tmp_path / "nested").write_bytes(data)
    [result] = found(tmp_path / "nested", max_depth=4)
    if readable:
        assert isinstance(result, Document)
    else:
        assert isinstance(result, RefusedInput) and "nested more than 4 levels" in result.reason


@pytest.mark.parametrize("data, reason", [
    (xb.gzipped(XML)[: len(xb.gzipped(XML)) // 2], "truncated gzip"),
    (b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + bytes(range(256)), "corrupt gzip"),
    (b"PK\x03\x04" + bytes(range(256)) * 2, "corrupt zip"),
    (bytes(range(1, 256)) * 64, "neither XML, JSON, gzip, zip nor e-mail"),
])
def test_broken_bytes_are_refused_in_one_line(tmp_path, data, reason):
    (tmp_path / "broken").write_bytes(data)
    [refused] = found(tmp_path / "broken")
    assert isinstance(refused, RefusedInput) and reason in refused.reason and "\n" not in refused.reason


LARGE_SCRIPT = textwrap.dedent("""
    import resource, sys
    from ingest.files import iter_documents
    from ingest.xml_report import parse
    def rss_kb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    [document] = iter_documents(sys.argv[1], max_bytes=1 << 30, max_depth=4)
    parsed = parse(document)
    before = rss_kb()
    records = messages = 0
    addresses = set()
    for record in parsed.records:
        records += 1
        messages += record.count
        addresses.add(record.source_ip)
    print(records, messages, len(addresses), len(parsed.warnings), rss_kb() - before)
""")


def stream_large(path, late: dict | None = None) -> tuple[int, int, int, int, int, int]:
    """Write a 50,000-record report (the last record takes `late`) and stream it in a fresh
    process: (file size, records, messages, distinct addresses, warnings, RSS growth in KB)."""
    head, tail = xb.report(["@@"]).split("<record>@@</record>")
    with open(path, "w") as out:
        out.write(head)
        for number in range(50_000):
            out.write(xb.element("record", xb.record(
                source_ip=f"10.{number // 65536}.{number // 256 % 256}.{number % 256}",
                count=number % 7 + 1, **(late if late and number == 49_999 else {}))))
        out.write(tail)
    result = subprocess.run([sys.executable, "-c", LARGE_SCRIPT, str(path)], capture_output=True,
                            text=True, check=True)
    return (path.stat().st_size, *map(int, result.stdout.split()))


@pytest.mark.slow
def test_a_50000_record_report_streams_with_flat_memory(tmp_path):
    size, records, messages, _, _, growth_kb = stream_large(tmp_path / "large.xml")
    assert records == 50_000 and messages == sum(n % 7 + 1 for n in range(50_000))
    # A tree kept whole would need several times the file's size; streaming stays far below it.
    assert size > 20 * MB and growth_kb * 1024 < size / 2
