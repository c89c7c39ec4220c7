"""Repairs made to a report's text before parsing: each noted once, plain markup left alone."""
import io

import pytest

from ingest.xml_text import clean_chunks


def cleaned(data: bytes) -> tuple[str, list[str]]:
    notes = []
    out = b"".join(clean_chunks(io.BytesIO(data), "r.xml", lambda key, text: notes.append(key)))
    return out.decode("utf-8"), notes


@pytest.mark.parametrize("raw, text, notes", [
    ("<a><b/><c x='1'>v</c><!-- k --></a>", "<a><b/><c x='1'>v</c><!-- k --></a>", []),
    ("<a><![CDATA[x]]><?pi x?></a>", "<a><![CDATA[x]]><?pi x?></a>", []),
    ("<a>1 < 2</a>", "<a>1 &lt; 2</a>", ["stray-lt"]),
    ("<a><bad@x.example></a>", "<a>&lt;bad@x.example></a>", ["stray-lt"]),
    ("<a>é<b@x></a>", "<a>é&lt;b@x></a>", ["stray-lt"]),
    ("<a>x\x01y\x1f</a>", "<a>xy</a>", ["controls"]),
    ("<a>é\x0bx\ufffe</a>", "<a>éx</a>", ["controls"]),
    ("<a>tab\tand\r\nnew line</a>", "<a>tab\tand\r\nnew line</a>", []),
], ids=["plain markup", "cdata and pi", "a lone <", "an address in <>", "non-ascii stray <",
        "ascii controls", "non-ascii controls", "tab and newlines are allowed"])
def test_only_what_xml_cannot_hold_is_repaired_and_noted(raw, text, notes):
    assert cleaned(raw.encode("utf-8")) == (text, notes)


def test_a_byte_that_is_not_utf8_becomes_a_replacement_character():
    assert cleaned(b"<a>x\x91y</a>") == ("<a>x\ufffdy</a>", ["bytes"])
