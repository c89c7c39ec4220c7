"""Names from strangers reach the terminal escaped, in text and JSON output alike."""
from __future__ import annotations

import json

import pytest

from ingest.printable import printable
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild

HOSTILE = "\x1b]0;owned\x07\x1b[2Jr\u202egpj.xml"
SHOWN = "\\x1b]0;owned\\x07\\x1b[2Jr\\u202egpj.xml"


@pytest.fixture
def acme(database):
    make_domain(make_org("Acme"), "example.com")


def test_printable_escapes_controls_marks_and_stray_bytes():
    assert printable(HOSTILE) == SHOWN
    assert printable("caf\u00e9 \u00fcber.xml") == "caf\u00e9 \u00fcber.xml"
    assert printable("r\udcff\x00\u2028\x9b.xml") == "r\\xff\\x00\\u2028\\x9b.xml"


def hostile_zip(tmp_path):
    path = tmp_path / "names.zip"
    path.write_bytes(xmlbuild.zipped({HOSTILE: b"<feedback>",
                                      "good.xml": xmlbuild.report_bytes(report_id="good")}))
    return path


@pytest.mark.parametrize("output", ["text", "json"])
def test_rua_ingest_prints_a_hostile_member_name_escaped(acme, rua, tmp_path, output):
    result = rua("ingest", "--format", output, hostile_zip(tmp_path))
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\u202e" not in result.output
    line = result.output.splitlines()[0]
    if output == "json":
        shown = json.loads(line)
        assert SHOWN in shown["error"] and [r["report_id"] for r in shown["reports"]] == ["good"]
    else:
        assert SHOWN in line and line.endswith("[1 report from it stored]")


@pytest.mark.parametrize("output", ["text", "json"])
def test_rua_fetch_prints_a_hostile_attachment_name_escaped(acme, rua, tmp_path, output):
    box = tmp_path / "box"
    for sub in ("new", "cur", "tmp"):
        (box / sub).mkdir(parents=True)
    (box / "new" / "1.eml").write_bytes(xmlbuild.mail({HOSTILE: (b"<feedback>", "text/xml")}))
    result = rua("fetch", "maildir", "--format", output, box)
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    line = result.output.splitlines()[0]
    assert SHOWN in (json.loads(line)["error"] if output == "json" else line)
