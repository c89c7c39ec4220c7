"""Turn a report's bytes into clean UTF-8 for the XML parser, noting each repair it makes.

Real reporters declare windows-1252, start with a BOM or a stray space, leave an invalid byte or an
unescaped '<' in a value. Those are repaired here, as a stream, so the parser stays strict about
structure; a DOCTYPE (entities, external DTDs) is refused before the parser sees it.
"""
from __future__ import annotations

import codecs
import re
from typing import BinaryIO, Iterator

from ingest.model import Note, ReportError
from ingest.printable import bounded

CHUNK = 256 * 1024
HOLD_LIMIT = 8192       # a tag longer than this is not waited for across chunks
_DECLARED = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_TAG = (r"(?:/?[A-Za-z_][\w.\-]*(?::[\w.\-]+)?"
        r"""(?:\s+[A-Za-z_:][\w.\-:]*\s*=\s*(?:"[^"]*"|'[^']*'))*\s*/?>"""
        r"|!--|!\[CDATA\[|!DOCTYPE|\?[A-Za-z])")
_STRAY_LT = re.compile("<(?!" + _TAG + ")")
# A '<' not starting a plain tag (<a>, </a>, <a/>): only these can be stray, and they are few.
_NOT_PLAIN_TAG = re.compile(r"<(?!/?[A-Za-z_][\w.\-]*/?>)")
_NOT_PLAIN_TAG_BYTES = re.compile(rb"<(?!/?[A-Za-z_][\w.\-]*/?>)")   # \w: ASCII either way
_CONTROL_BYTES = bytes(c for c in range(32) if c not in (9, 10, 13))
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]")
_FIRST_ELEMENT = re.compile(r"<[A-Za-z_]")
_FEEDBACK = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?feedback[\s>/]")
# Codecs that read ASCII bytes as the same characters: an ASCII document in one needs no decoding.
_KEEPS_ASCII = {"utf-8", "utf-8-sig", "ascii", "iso8859-1", "cp1252"}


def encoding_of(head: bytes) -> str:
    """The codec a document is written in: its BOM, else its declaration, else UTF-8."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if head.startswith(b"<\x00?\x00") or head.startswith(b"<\x00"):
        return "utf-16-le"
    if head.startswith(b"\x00<"):
        return "utf-16-be"
    found = _DECLARED.match(head)
    return found.group(1).decode("ascii") if found else "utf-8"


class NeedsRepair(Exception):
    """strict_chunks met something clean_chunks would repair, refuse or note: read it that way."""


def clean_chunks(stream: BinaryIO, origin: str, note: Note) -> Iterator[bytes]:
    """UTF-8 chunks of the document with its declaration removed and its text repaired."""
    name, decoder, raw, text = _opening(stream, origin, note)
    held = ""
    while True:
        final = not raw
        text = held + text
        held = "" if final else _incomplete_tag(text)
        if held:
            text = text[: len(text) - len(held)]
        if "<!DOCTYPE" in text or "<!ENTITY" in text:
            _refuse_dtd(origin)
        if text:
            yield _repair(text, name, note).encode("utf-8", "surrogatepass")
        if final:
            return
        raw = stream.read(CHUNK)
        text = _decode(decoder, raw, not raw, origin, name)


def strict_chunks(stream: BinaryIO, origin: str, note: Note) -> Iterator[bytes]:
    """The chunks clean_chunks gives, as they are, for a document it would leave unchanged.

    Such a document is ASCII in a codec that keeps ASCII as it is, and holds no '<!' (DOCTYPE,
    comment, CDATA) or '<?' past its declaration, whose text a repair could touch; raises
    NeedsRepair at the first chunk that is not. A stray '<' or a control character is left for
    the XML parser to reject (it does, before handing out what follows)."""
    name, _, raw, text = _opening(stream, origin, note)
    if codecs.lookup(name).name not in _KEEPS_ASCII or not text.isascii():
        raise NeedsRepair(name)
    data, held = text.encode("ascii"), b""
    while True:
        final = not raw
        data = held + data
        held = b"" if final else _incomplete_tag_bytes(data)
        if held:
            data = data[: len(data) - len(held)]
        # '!' and '?' are rare in reports: memchr finds them far faster than "<!" is searched
        if ((b"!" in data and b"<!" in data) or (b"?" in data and b"<?" in data)
                or not data.isascii()):
            raise NeedsRepair("markup or text that clean_chunks reads its own way")
        if data:
            yield data
        if final:
            return
        data = raw = stream.read(CHUNK)


def _opening(stream: BinaryIO, origin: str, note: Note):
    """(codec name, incremental decoder, first bytes, their text with the prolog read)."""
    head = stream.read(CHUNK)
    name = encoding_of(head)
    try:
        decoder = codecs.getincrementaldecoder(name)(errors="surrogateescape")
    except LookupError:
        raise ReportError(f"{origin}: unknown character encoding {bounded(name)!r}") from None
    return name, decoder, head, _prolog(_decode(decoder, head, False, origin, name), origin, note)


def _decode(decoder, raw: bytes, final: bool, origin: str, name: str) -> str:
    try:
        return decoder.decode(raw, final=final)
    except UnicodeError as exc:   # UTF-16/32 cannot escape every bad sequence
        raise ReportError(f"{origin}: the text is not valid {name} ({exc.reason})") from None


def _prolog(text: str, origin: str, note: Note) -> str:
    if text[:1].isspace():
        note("leading", "the document starts with white space before its XML declaration")
    text = text.lstrip("\ufeff \t\r\n")
    text = _DECLARATION.sub("", text, count=1)
    first = _FIRST_ELEMENT.search(text)
    prolog = text[: first.start()] if first else text
    feedback = _FEEDBACK.search(text)
    if first and feedback and first.start() < feedback.start():
        wrapper = text[first.start():feedback.start()]
        if "</" not in wrapper and "/>" not in wrapper:
            # e.g. an unclosed <xs:schema> pasted before <feedback>: it encloses nothing real
            note("wrapper", f"the stray start tag {wrapper.split()[0]}...> before <feedback> was ignored")
            text = text[: first.start()] + text[feedback.start():]
    if "<!DOCTYPE" in prolog.upper() or "<!ENTITY" in prolog.upper():
        _refuse_dtd(origin)
    return text


def _refuse_dtd(origin: str):
    """Reports never need a DTD; refusing any keeps entity expansion and external fetches out."""
    raise ReportError(f"{origin}: a document type declaration (DOCTYPE) is not accepted "
                      "in a report (entities and external DTDs are refused)")


def _incomplete_tag(text: str) -> str:
    """The tail after a '<' whose tag has not closed yet, to join with the next chunk."""
    start = text.rfind("<")
    if start == -1 or ">" in text[start:] or len(text) - start > HOLD_LIMIT:
        return ""
    return text[start:]


def _incomplete_tag_bytes(data: bytes) -> bytes:
    """_incomplete_tag of ASCII bytes; NeedsRepair where clean_chunks would repair the tail."""
    start = data.rfind(b"<")
    if start == -1 or b">" in data[start:]:
        return b""
    if len(data) - start > HOLD_LIMIT:
        raise NeedsRepair("a tag too long to wait for")   # clean_chunks escapes its '<'
    return data[start:]


def _repair(text: str, encoding: str, note: Note) -> str:
    # ASCII text (the usual case) has no escaped byte, and is searched faster as bytes.
    raw = text.encode("ascii") if text.isascii() else None
    if raw is None and _ESCAPED_BYTES.search(text):
        note("bytes", f"bytes that are not valid {encoding} were replaced with U+FFFD")
        text = _ESCAPED_BYTES.sub("\ufffd", text)
    if (len(raw.translate(None, _CONTROL_BYTES)) != len(raw) if raw is not None
            else _BAD_CHARS.search(text)):
        note("controls", "control characters that XML does not allow were removed")
        text = _BAD_CHARS.sub("", text)
        raw = None
    if _has_stray_lt(text, raw):
        note("stray-lt", "an unescaped '<' in a value was read as a literal character")
        text = _STRAY_LT.sub("&lt;", text)
    return text


def _has_stray_lt(text: str, raw: bytes | None) -> bool:
    """Whether a '<' opens no tag; raw is text as ASCII bytes (same offsets), when it is ASCII."""
    candidates = (_NOT_PLAIN_TAG_BYTES.finditer(raw) if raw is not None
                  else _NOT_PLAIN_TAG.finditer(text))
    return any(_STRAY_LT.match(text, found.start()) for found in candidates)
