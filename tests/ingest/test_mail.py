"""Reports carried by e-mail: attachments in any encoding, inline, broken headers, mbox, Maildir."""
import base64

import pytest

from ingest.files import iter_documents
from ingest.model import Document, RefusedInput
from tests.ingest import xmlbuild as xb

XML = xb.report_bytes()


def found(path, **limits):
    return list(iter_documents(str(path), max_bytes=limits.get("max_bytes", 1 << 20),
                               max_depth=limits.get("max_depth", 4)))


def contents(results):
    out = []
    for result in results:
        assert isinstance(result, Document), result
        with result.open() as stream:
            out.append(stream.read())
    return out


@pytest.mark.parametrize("attachments, cte", [
    ({"r.xml.gz": (xb.gzipped(XML), "application/gzip")}, "base64"),
    ({"r.zip": (xb.zipped({"r.xml": XML}), "application/zip")}, "base64"),
    ({"r.xml": (XML, "application/xml")}, "base64"),
    ({"r.xml": (XML, "text/xml")}, "quoted-printable"),
    ({"r.xml": (XML, "application/xml")}, "7bit"),
    ({"report": (xb.gzipped(XML), "application/octet-stream")}, "base64"),
])
def test_a_report_attachment_is_found_in_any_transfer_encoding(tmp_path, attachments, cte):
    (tmp_path / "m.eml").write_bytes(xb.mail(attachments, cte=cte))
    results = found(tmp_path / "m.eml")
    assert contents(results) == [XML]
    assert results[0].origin.startswith(f"{tmp_path / 'm.eml'} » {next(iter(attachments))}")


def test_a_message_whose_whole_body_is_the_gzip_is_read(tmp_path):
    body = base64.encodebytes(xb.gzipped(XML)).decode()
    raw = ("From: r@x.example\nSubject: report\nMIME-Version: 1.0\nContent-Type: application/gzip\n"
           f"Content-Transfer-Encoding: base64\n\n{body}")
    (tmp_path / "top").write_text(raw)
    assert contents(found(tmp_path / "top")) == [XML]


def test_an_inline_xml_body_is_read_but_an_html_body_is_not_a_report(tmp_path):
    message = xb.mail({}, body=XML.decode())
    (tmp_path / "inline.eml").write_bytes(message)
    assert contents(found(tmp_path / "inline.eml")) == [XML]
    (tmp_path / "html.eml").write_bytes(xb.mail({}, body="<html><body>Hello</body></html>"))
    [refused] = found(tmp_path / "html.eml")
    assert isinstance(refused, RefusedInput) and refused.reason.endswith("no DMARC or TLS report attachment found")


def test_a_broken_preview_header_with_an_unfolded_name_line_still_yields_the_attachment(tmp_path):
    body = base64.encodebytes(xb.gzipped(XML)).decode()
    raw = (
        "From: dmarcreport@microsoft.example\nSubject: [Preview] Report Domain: example.com\n"
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b1\"\n\n"
        "--b1\nContent-Type: text/plain\n\nThis is a DMARC report.\n"
        "--b1\nContent-Type: application/gzip\nContent-Transfer-Encoding: base64\n"
        "Content-ID: <x@y>\n"
        "name=\"enterprise.protection.outlook.com!example.com!1!2.xml.gz\"\n"
        "Content-Description: enterprise.protection.outlook.com!example.com!1!2.xml.gz\n"
        "Content-Disposition: attachment; filename=\"enterprise.protection.outlook.com!example.com!1!2.xml.gz\";\n"
        f"\n{body}\n--b1--\n")
    (tmp_path / "preview").write_text(raw)
    results = found(tmp_path / "preview")
    assert contents(results) == [XML]
    assert results[0].origin.endswith("enterprise.protection.outlook.com!example.com!1!2.xml.gz")


def test_an_attachment_marked_as_an_archive_that_is_not_one_is_refused_by_name(tmp_path):
    (tmp_path / "bad.eml").write_bytes(xb.mail({"r.zip": (b"\x00garbage\x01" * 20, "application/zip"),
                                                "s.xml.gz": (xb.gzipped(XML), "application/gzip")}))
    refused, document = found(tmp_path / "bad.eml")
    assert isinstance(refused, RefusedInput) and "r.zip" in refused.reason
    assert contents([document]) == [XML]


def test_a_message_without_a_report_is_refused(tmp_path):
    (tmp_path / "hello.eml").write_bytes(xb.mail({"photo.png": (b"\x89PNG\r\n", "image/png")}))
    [refused] = found(tmp_path / "hello.eml")
    assert refused.reason == f"{tmp_path / 'hello.eml'}: no DMARC or TLS report attachment found"


def test_an_mbox_yields_the_report_of_each_message(tmp_path):
    first = xb.mail({"a.xml.gz": (xb.gzipped(XML), "application/gzip")})
    other = xb.report_bytes(report_id="r-2")
    second = xb.mail({"b.xml": (other, "application/xml")}, body="From here on, a quoted line.")
    second = second.replace(b"\nFrom here", b"\n>From here")   # mbox quoting, undone on reading
    mbox = (b"From MAILER-DAEMON Thu Jan  1 00:00:00 2026\n" + first + b"\n"
            b"From MAILER-DAEMON Thu Jan  1 00:00:01 2026\n" + second + b"\n")
    (tmp_path / "inbox").write_bytes(mbox)
    results = found(tmp_path / "inbox")
    assert contents(results) == [XML, other]
    assert [r.origin.split(" » ")[1] for r in results] == ["message 1", "message 2"]


def test_a_maildir_reads_new_and_cur_but_not_tmp(tmp_path):
    maildir = tmp_path / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (maildir / sub).mkdir(parents=True)
    (maildir / "new" / "1.host").write_bytes(xb.mail({"a.xml.gz": (xb.gzipped(XML), "application/gzip")}))
    (maildir / "cur" / "2.host:2,S").write_bytes(xb.mail({"b.zip": (xb.zipped({"b.xml": XML}), "application/zip")}))
    (maildir / "tmp" / "3.host").write_bytes(b"half-written")
    results = found(maildir)
    assert contents(results) == [XML, XML]
    assert [r.origin.split("/")[-2] for r in results] == ["new", "cur"]


def test_maildir_plus_plus_subfolders_are_read_and_other_hidden_folders_are_not(tmp_path):
    maildir = tmp_path / "Maildir"
    for folder in (maildir, maildir / ".Reports"):
        for sub in ("cur", "new", "tmp"):
            (folder / sub).mkdir(parents=True)
    (maildir / ".Reports" / "new" / "1.host").write_bytes(
        xb.mail({"a.xml.gz": (xb.gzipped(XML), "application/gzip")}))
    (maildir / ".git").mkdir()
    (maildir / ".git" / "HEAD").write_bytes(b"ref: refs/heads/main\n")
    results = found(maildir)
    assert contents(results) == [XML] and ".Reports" in results[0].origin
