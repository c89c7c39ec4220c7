"""E-mail messages and mbox files: find the parts that carry a report, whatever their encoding."""
from __future__ import annotations

import base64
import binascii
import email
import email.errors
import email.policy
import quopri
import re
from email.message import Message
from typing import BinaryIO, Iterator

_FEEDBACK = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?feedback[\s>/]")
_REPORT_TYPES = {"application/zip", "application/x-zip-compressed", "application/x-zip",
                 "application/gzip", "application/x-gzip", "application/xml", "text/xml"}
_BASE64 = re.compile(rb"[A-Za-z0-9+/]+={0,2}")
_HEADER_LINE = re.compile(rb"^[!-9;-~]+:")
_NAME_PARAM = re.compile(r'^\s*(?:file)?name\*?=\s*"?([^";\r\n]+)"?', re.IGNORECASE)


def message_parts(raw: bytes) -> Iterator[tuple[str, str, bytes]]:
    """(name, content type, decoded bytes) for every leaf part; the caller decides which are reports."""
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    number = 0
    for part in message.walk():
        if part.is_multipart():
            continue
        number += 1
        name, payload = _decoded(part)
        yield name or f"part {number}", part.get_content_type(), payload


def declares_report(name: str, content_type: str) -> bool:
    """A part whose name or type says it carries a report (or an archive), whatever it holds."""
    lowered = name.lower()
    return content_type in _REPORT_TYPES or lowered.endswith((".zip", ".gz", ".gzip", ".xml"))


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


def looks_like_report_xml(head: bytes) -> bool:
    """An XML part in a message counts as a report only when it names <feedback>, unlike an HTML body."""
    return bool(_FEEDBACK.search(head))


def _decoded(part: Message) -> tuple[str, bytes]:
    name = _filename(part)
    if any(isinstance(d, email.errors.MissingHeaderBodySeparatorDefect) for d in part.defects):
        return _recover_unfolded(part, name)
    payload = part.get_payload(decode=True)
    return name, payload if isinstance(payload, bytes) else b""


def _filename(part: Message) -> str:
    try:
        name = part.get_filename() or part.get_param("name") or ""
    except (TypeError, ValueError, LookupError):
        name = ""
    if isinstance(name, tuple):  # RFC 2231 value that could not be decoded
        name = name[2]
    return str(name).strip()


def _recover_unfolded(part: Message, name: str) -> tuple[str, bytes]:
    """Some mailers break a header line (e.g. a bare `name=...` parameter) so the rest of the
    part's headers land in its body; strip those lines and decode what follows the blank line."""
    body = part.get_payload(decode=False)
    if not isinstance(body, str):
        return name, b""
    lines = body.replace("\r\n", "\n").split("\n")
    blank = next((i for i, line in enumerate(lines[:50]) if not line.strip()), None)
    displaced = lines[:blank] if blank is not None else []
    if blank is None or not all(_is_header_like(line) for line in displaced):
        return name, _decode_body(body, part)
    for line in displaced:
        found = _NAME_PARAM.match(line) or re.search(r'filename\*?="?([^";]+)"?', line, re.IGNORECASE)
        if found and not name:
            name = found.group(1).strip()
    return name, _decode_body("\n".join(lines[blank + 1:]), part)


def _is_header_like(line: str) -> bool:
    return bool(line[:1].isspace() or _NAME_PARAM.match(line)
                or _HEADER_LINE.match(line.encode("latin-1", "replace")))


def _decode_body(text: str, part: Message) -> bytes:
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    data = text.encode("latin-1", "replace")
    if encoding == "base64":
        try:
            return base64.b64decode(re.sub(rb"[^A-Za-z0-9+/=]", b"", data) + b"==", validate=False)
        except binascii.Error:
            return b""
    if encoding == "quoted-printable":
        return quopri.decodestring(data)
    return data


def mbox_messages(stream: BinaryIO) -> Iterator[bytes]:
    """Messages of an mbox file, split on `From ` lines, with mboxrd `>From` quoting undone."""
    lines: list[bytes] = []
    previous_blank = True
    for line in stream:
        if line.startswith(b"From ") and previous_blank:
            if lines:
                yield b"".join(lines)
            lines = []
            previous_blank = False
            continue
        if line[:1] == b">" and line.lstrip(b">").startswith(b"From "):
            line = line[1:]
        lines.append(line)
        previous_blank = not line.strip()
    if lines:
        yield b"".join(lines)
