"""Finding documents in files, archives, directories and stdin, recognised by content."""
import io
import sys

import pytest

from ingest.files import iter_documents
from ingest.model import Document, RefusedInput
from tests.ingest import xmlbuild as xb

LIMIT = 1 << 20
XML = xb.report_bytes()


def found(path, *, max_bytes=LIMIT, max_depth=4):
    return list(iter_documents(str(path), max_bytes=max_bytes, max_depth=max_depth))


def read_all(document):
    with document.open() as stream:
        return stream.read()


def contents(results):
    return [read_all(r) for r in results if isinstance(r, Document)]


@pytest.mark.parametrize("name, data", [
    ("report.xml", XML),
    ("report.xml.gz", xb.gzipped(XML)),
    ("report.xml.gz.gz", xb.gzipped(xb.gzipped(XML))),
    ("report.zip", xb.zipped({"r.xml": XML})),
    ("misnamed.txt", xb.gzipped(XML)),
    ("no-extension", xb.zipped({"r.xml": XML})),
    ("looks.zip", XML),
    ("stray-bytes.gz", xb.gzipped(XML) + b"\r\n"),
    ("two-members.gz", xb.gzipped(XML[:100]) + xb.gzipped(XML[100:])),
    ("gzip-in-zip.zip", xb.zipped({"r.xml.gz": xb.gzipped(XML)})),
])
def test_each_container_is_recognised_by_content_not_name(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    results = found(path)
    assert contents(results) == [XML]
    assert results[0].origin.startswith(str(path))


def test_document_open_gives_a_fresh_stream_each_time(tmp_path):
    (tmp_path / "r.gz").write_bytes(xb.gzipped(XML))
    [document] = found(tmp_path / "r.gz")
    with document.open() as first:
        first.read(10)
        assert read_all(document) == XML


def test_a_zip_yields_each_member_and_skips_directories_and_macos_entries(tmp_path):
    other = xb.report_bytes(report_id="r-2")
    (tmp_path / "many.zip").write_bytes(xb.zipped({
        "reports/": b"", "reports/a.xml": XML, "__MACOSX/reports/._a.xml": b"\x00\x05\x16\x07junk",
        "reports/._b.xml": b"\x00\x05\x16\x07", "reports/b.xml": other}))
    results = found(tmp_path / "many.zip")
    assert [r.origin.split(" » ")[-1] for r in results] == ["reports/a.xml", "reports/b.xml"]
    assert contents(results) == [XML, other]


def test_one_bad_member_never_stops_the_rest(tmp_path):
    (tmp_path / "mixed.zip").write_bytes(xb.zipped({"a.xml": XML, "b.gz": b"\x1f\x8bbroken", "c.xml": XML}))
    results = found(tmp_path / "mixed.zip")
    assert [type(r) for r in results] == [Document, RefusedInput, Document]
    assert "b.gz" in results[1].reason and "gzip" in results[1].reason


def test_a_directory_is_walked_recursively_in_sorted_order_skipping_hidden_files(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.xml").write_bytes(XML)
    (tmp_path / "a.xml.gz").write_bytes(xb.gzipped(XML))
    (tmp_path / "c.xml").write_bytes(XML)
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    results = found(tmp_path)
    assert [r.origin[len(str(tmp_path)) + 1:] for r in results] == ["a.xml.gz", "b/2.xml", "c.xml"]


def test_stdin_is_read_when_the_path_is_a_dash(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(xb.gzipped(XML))))
    [document] = found("-")
    assert document.origin == "<stdin>" and read_all(document) == XML


def test_stdin_beyond_the_cap_is_refused(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(XML)))
    [refused] = found("-", max_bytes=100)
    assert isinstance(refused, RefusedInput) and "limit" in refused.reason


@pytest.mark.parametrize("name, data, reason", [
    ("empty.xml", b"", "empty file"),
    ("noise.bin", bytes(range(256)) * 4, "neither XML, JSON, gzip, zip nor e-mail"),
    ("other.json", b"{\"name\": \"x\"}", "JSON, but not an SMTP TLS report"),
    ("truncated.gz", xb.gzipped(XML)[:-12], "truncated gzip"),
    ("corrupt.gz", b"\x1f\x8b\x08\x00" + b"\xff" * 40, "corrupt gzip"),
    ("corrupt.zip", b"PK\x03\x04" + b"\x00" * 60, "corrupt zip"),
    ("empty.zip", xb.zipped({"dir/": b""}), "holds no files"),
    ("large.xml", XML + b" " * LIMIT, "limit"),
])
def test_an_unreadable_file_is_refused_with_a_reason_naming_it(tmp_path, name, data, reason):
    (tmp_path / name).write_bytes(data)
    [refused] = found(tmp_path / name)
    assert isinstance(refused, RefusedInput)
    assert reason in refused.reason and refused.reason.startswith(str(tmp_path / name))
    assert "\n" not in refused.reason


def test_a_missing_path_is_refused_not_raised(tmp_path):
    [refused] = found(tmp_path / "nowhere.xml")
    assert isinstance(refused, RefusedInput) and "cannot read" in refused.reason
