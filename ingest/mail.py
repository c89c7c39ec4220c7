"""E-mail messages and mbox files: find the parts that carry a report, whatever their encoding.

A message is walked over its bytes, within a budget checked before anything costly: a part's
header block, its MIME parameters, the number of parts and their nesting are bounded, and every
scan is a regular expression over the bytes, so time and memory stay linear in the message's
size. Python's email package only ever sees the few header fields wanted, once bounded (its
parameter parser is quadratic in a header's length).
"""
from __future__ import annotations

import binascii
import heapq
import base64
import re
from email.message import Message
from typing import Iterator

_FEEDBACK = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?feedback[\s>/]")
_REPORT_TYPES = {"application/zip", "application/x-zip-compressed", "application/x-zip",
                 "application/gzip", "application/x-gzip", "application/xml", "text/xml"}
# Patterns over a header block start at a line break (the block is read with one before it):
# the engine then only tries them at line breaks, where `^` in MULTILINE tries every byte.
_NAME_PARAM = re.compile(rb'\n[ \t]*(?:file)?name\*?=[ \t]*"?([^";\r\n]+)"?', re.IGNORECASE)
# A header line (field name and colon) or a folded line's continuation.
_RFC_LINE = rb"(?:[!-9;-~]+:|[ \t])"
_NOT_RFC_LINE = re.compile(rb"\n(?!" + _RFC_LINE + rb")")
# Some mailers break a header (a bare `name=...` line); such a block is still all header.
_NOT_HEADER_LIKE = re.compile(rb"\n(?!" + _RFC_LINE + rb"|[ \t]*(?:file)?name\*?=)")
_BLANK_LINE = re.compile(rb"\n\r?\n")
_WANTED = re.compile(rb"\n(content-(?:type|transfer-encoding|disposition))[ \t]*:"
                     rb"(.*(?:\r?\n[ \t].*)*)", re.IGNORECASE)
_LEADING_SPACE = re.compile(rb"\s*")
_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/]")
_BASE64 = re.compile(rb"[A-Za-z0-9+/]+={0,2}")
# An mbox's separator line ends where its message starts; the blank line before it stays.
# Two plain strings: the regular-expression engine scans for those at memory speed.
_AFTER_BLANK_LINE = (re.compile(rb"\n\nFrom "), re.compile(rb"\n\r\nFrom "))
_QUOTED_FROM = re.compile(rb"\n>(>*From )")

# A part's header block (top-level headers included) and its lines.
MAX_HEADER_BYTES = 64 * 1024
MAX_HEADER_LINES = 1000
# A Content-Type or Content-Disposition field: its length and its parameters (`;`).
MAX_PARAMETER_FIELD = 8 * 1024
MAX_PARAMETERS = 32
# Parts of one message when no RUA_MAX_MEMBERS is given (the setting's default).
MAX_PARTS = 1000


class MessageRefused(ValueError):
    """The message passes its budget here; the reason is one line, the rest is not read."""


def message_parts(raw: bytes, *, max_depth: int,
                  max_parts: int) -> Iterator[tuple[str, str, bytes]]:
    """(name, content type, decoded bytes) for every leaf part, in order; the caller decides
    which are reports. MessageRefused where the message passes its budget: parts nested more
    than max_depth levels, more than max_parts parts, a header block or parameter too long."""
    start = _LEADING_SPACE.match(raw).end()
    walk = _Walk(raw, max_depth, max_parts)
    yield from walk.entity(start, len(raw), 0)


def declares_tls_report(name: str, content_type: str) -> bool:
    """A part whose type (application/tlsrpt+json, +gzip) or name says it is a TLS report."""
    lowered = name.lower()
    return content_type.startswith("application/tlsrpt") or lowered.endswith((".json", ".json.gz"))


def unbase64(data: bytes) -> bytes:
    """data decoded as base64 when it is nothing but base64 text, else data unchanged."""
    text = re.sub(rb"\s+", b"", data)
    if not text or len(text) % 4 or not _BASE64.fullmatch(text):
        return data
    return base64.b64decode(text)


def declares_report(name: str, content_type: str) -> bool:
    """A part whose name or type says it carries a report (or an archive), whatever it holds."""
    lowered = name.lower()
    return content_type in _REPORT_TYPES or lowered.endswith((".zip", ".gz", ".gzip", ".xml"))


def looks_like_report_xml(head: bytes) -> bool:
    """An XML part in a message counts as a report only when it names <feedback>, unlike an HTML body."""
    return bool(_FEEDBACK.search(head))


class _Walk:
    """One message's walk: the bytes, the budget and the parts counted so far."""

    def __init__(self, raw: bytes, max_depth: int, max_parts: int):
        self.raw, self.max_depth, self.max_parts = raw, max_depth, max_parts
        self.parts = 0
        self.leaves = 0

    def entity(self, start: int, end: int, depth: int) -> Iterator[tuple[str, str, bytes]]:
        """The leaves of the entity raw[start:end] (headers, blank line, body)."""
        header, body = self.split(start, end)
        fields = _fields(header)
        content_type = fields.get_content_type()
        encoding = str(fields.get("content-transfer-encoding", "")).strip().lower()
        boundary = _param(fields, "boundary") if content_type.startswith("multipart/") else ""
        if boundary:
            self.nest(depth)
            delimiter = boundary.encode("utf-8", "surrogateescape")
            for part_start, part_end in self.delimited(body, end, delimiter):
                yield from self.entity(part_start, part_end, depth + 1)
            return
        if content_type == "message/rfc822" and encoding in ("", "7bit", "8bit", "binary"):
            self.nest(depth)
            self.count()
            yield from self.entity(body, end, depth + 1)
            return
        self.leaves += 1
        name = _filename(fields) or _bare_name(header) or f"part {self.leaves}"
        yield name, content_type, _decoded(memoryview(self.raw)[body:end], encoding)

    def split(self, start: int, end: int) -> tuple[bytes, int]:
        """The entity's header block, with a line break before it, and where its body starts;
        the block within the budget."""
        if self.raw.startswith((b"\n", b"\r\n"), start, end):
            return b"", self.raw.index(b"\n", start) + 1
        blank = _BLANK_LINE.search(self.raw, start, min(end, start + MAX_HEADER_BYTES + 4))
        if blank is None and end - start > MAX_HEADER_BYTES:
            raise MessageRefused(f"a header block longer than {MAX_HEADER_BYTES} bytes")
        stop = end if blank is None else blank.start()
        header = b"\n" + self.raw[start:stop]
        if header.count(b"\n") > MAX_HEADER_LINES:
            raise MessageRefused(f"a header block of more than {MAX_HEADER_LINES} lines")
        body = end if blank is None else blank.end()
        first = _NOT_RFC_LINE.search(header)
        if first is None or _NOT_HEADER_LIKE.search(header) is None:
            return header, body
        # A line that is no header ends the headers (as RFC 5322 readers do): the body starts there.
        return header[:first.start()], start + first.start()

    def delimited(self, body: int, end: int, boundary: bytes) -> Iterator[tuple[int, int]]:
        """(start, end) of each part between the boundary's delimiter lines (RFC 2046)."""
        # From the line break before the body on; the one ending a delimiter line is left for
        # the next delimiter to start with.
        delimiter = re.compile(rb"\n--" + re.escape(boundary) + rb"(--)?[ \t]*(?=\r?\n|\Z)")
        opened = None
        for found in delimiter.finditer(self.raw, body - 1, end):
            if opened is not None:
                yield opened, max(opened, _before_cr(self.raw, found.start()))
            if found.group(1):
                return
            self.count()
            opened = _after_line_break(self.raw, found.end())
        if opened is not None:
            yield opened, end

    def count(self) -> None:
        self.parts += 1
        if self.parts > self.max_parts:
            raise MessageRefused(f"more than {self.max_parts} MIME parts (RUA_MAX_MEMBERS)")

    def nest(self, depth: int) -> None:
        if depth + 1 > self.max_depth:
            raise MessageRefused(f"MIME parts nested more than {self.max_depth} levels deep "
                                 f"(RUA_MAX_ARCHIVE_DEPTH)")


def _before_cr(raw: bytes, at: int) -> int:
    """A delimiter's preceding line break (a CR before its LF too) is not the part's."""
    return at - 1 if raw[at - 1:at] == b"\r" else at


def _after_line_break(raw: bytes, at: int) -> int:
    if raw[at:at + 1] == b"\r":
        at += 1
    return at + 1 if raw[at:at + 1] == b"\n" else at


def _fields(header: bytes) -> Message:
    """A Message holding only the Content-* fields wanted, each refused when over its budget."""
    fields = Message()
    for found in _WANTED.finditer(header):
        name = found.group(1).decode().title()
        value = re.sub(rb"\r?\n", b"", found.group(2)).strip()
        if len(value) > MAX_PARAMETER_FIELD:
            raise MessageRefused(f"a {name} field longer than {MAX_PARAMETER_FIELD} bytes")
        if value.count(b";") > MAX_PARAMETERS:
            raise MessageRefused(f"a {name} field with more than {MAX_PARAMETERS} parameters")
        if name not in fields:
            fields[name] = value.decode("utf-8", "surrogateescape")
    return fields


def _param(fields: Message, name: str) -> str:
    try:
        value = fields.get_param(name) or ""
    except (TypeError, ValueError, LookupError):
        return ""
    if isinstance(value, tuple):  # RFC 2231 value that could not be decoded
        value = value[2]
    return str(value)


def _filename(fields: Message) -> str:
    try:
        name = fields.get_filename() or fields.get_param("name") or ""
    except (TypeError, ValueError, LookupError):
        name = ""
    if isinstance(name, tuple):  # RFC 2231 value that could not be decoded
        name = name[2]
    return str(name).strip()


def _bare_name(header: bytes) -> str:
    """A `name=` line some mailers leave unfolded in a header block."""
    found = _NAME_PARAM.search(header)
    return found.group(1).decode("utf-8", "surrogateescape").strip() if found else ""


def _decoded(body: memoryview, encoding: str) -> bytes:
    """The body decoded from its transfer encoding, leniently (as mail readers do)."""
    if encoding == "base64":
        try:
            return binascii.a2b_base64(body)
        except binascii.Error:      # bad padding: keep the alphabet and pad it
            letters = _NOT_BASE64.sub(b"", body)
            if len(letters) % 4 == 1:       # one letter short of a byte: dropped
                letters = letters[:-1]
            letters += b"=" * (-len(letters) % 4)
            try:
                return binascii.a2b_base64(letters)
            except binascii.Error:
                return b""
    if encoding == "quoted-printable":
        return binascii.a2b_qp(body)
    return bytes(body)


def mbox_messages(data: bytes) -> Iterator[bytes]:
    """Messages of an mbox file, split on `From ` lines that start it or follow a blank line,
    with mboxrd `>From` quoting undone; found by one lazy scan of the bytes."""
    separators = heapq.merge(*((found.end() - 5 for found in pattern.finditer(data))
                               for pattern in _AFTER_BLANK_LINE))
    start = 0 if data.startswith(b"From ") else next(separators, None)
    while start is not None:
        following = next(separators, None)
        end = len(data) if following is None else following
        line_end = data.find(b"\n", start, end)
        body = end if line_end < 0 else line_end + 1
        message = data[body:end]
        if _QUOTED_FROM.search(data, body - 1, end):    # from the From line's break on
            message = _QUOTED_FROM.sub(rb"\n\1", data[body - 1:end])[1:]
        yield message
        start = following
