"""Find the reports in what the user hands us: files, directories, Maildirs, mboxes, stdin.

A report is DMARC aggregate XML or an SMTP TLS report (RFC 8460 JSON).

Containers are recognised by their content, never by file name. Every decompression is measured
while it runs, so a bomb is refused at the cap instead of filling memory or disk.
"""
from __future__ import annotations

import dataclasses
import os
import re
import sys
from typing import Callable, Iterator

from ingest.archives import (Budget, BudgetSpent, SpooledBytes, TooLarge, Unreadable, gunzip,
                             read_stream, spool, zip_members)
from ingest.failure_reports import is_failure_report
from ingest.mail import (MAX_PARTS, MessageRefused, declares_report, declares_tls_report,
                         looks_like_report_xml, mbox_messages, message_parts, unbase64)
from ingest.model import Document, Refused
from ingest.printable import bounded
from ingest.tls_report import looks_like_tls_report
from rules.authenticity import NOT_FROM_MAIL, NOT_VERIFIED, Provenance

# Verifies a message's DKIM signatures (dnscheck/mail_signatures.py): what its mail proves.
Attest = Callable[[bytes], Provenance]

SEP = " » "
_EMAIL_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*:")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def iter_documents(path: str, *, max_bytes: int, max_depth: int, max_input_bytes=None,
                   max_members=None, attest: Attest | None = None) -> Iterator[Document | Refused]:
    """Every XML document in path (file, directory, Maildir, mbox, or "-" for stdin), in order;
    an unreadable member becomes a Refused and never stops the rest. Each input file may
    decompress max_input_bytes and open max_members in all (None: no limit). attest: what a
    message's signatures prove, given to the documents it carries (None: not checked)."""
    walker = _Walker(max_bytes, max_depth, (max_input_bytes, max_members), attest)
    if path == "-":
        yield from walker.stdin()
    else:
        yield from walker.path(str(path))


def iter_message(origin: str, data: bytes, *, max_bytes: int, max_depth: int,
                 max_input_bytes=None, max_members=None,
                 attest: Attest | None = None) -> Iterator[Document | Refused]:
    """Every XML document in one message already read from a mailbox (whose size the caller
    checked against max_bytes before reading it), named by origin; one budget as for a file."""
    walker = _Walker(max_bytes, max_depth, (max_input_bytes, max_members), attest)
    yield from walker.expand(
        origin, SpooledBytes(data), 0)


def sniff(head: bytes) -> str | None:
    """The container kind from the first bytes: xml, json, gzip, zip, mbox, email, or None."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return "zip"
    if head.startswith(_BOMS) or head.lstrip().startswith(b"<"):
        return "xml"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return "json"
    if head.startswith(b"From "):
        return "mbox"
    if _EMAIL_HEADER.match(head.lstrip()):
        return "email"
    return None


class _Walker:
    def __init__(self, max_bytes: int, max_depth: int, limits: tuple, attest: Attest | None):
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.limits = limits
        self.budget = Budget(*limits)
        self.attest = attest or (lambda raw: NOT_VERIFIED)

    def stdin(self) -> Iterator[Document | Refused]:
        try:
            blob = spool(read_stream(sys.stdin.buffer), self.max_bytes)
        except TooLarge as exc:
            yield Refused("<stdin>", f"<stdin>: {exc}")
            return
        yield from self.expand("<stdin>", blob, 0)

    def path(self, path: str) -> Iterator[Document | Refused]:
        if os.path.isdir(path):
            yield from self.directory(path)
            return
        try:
            size = os.path.getsize(path)
            with open(path, "rb"):
                pass
        except OSError as exc:
            yield Refused(path, f"{path}: cannot read it ({exc.strerror or exc})")
            return
        if size > self.max_bytes:
            yield Refused(path, f"{path}: {size} bytes, larger than the {self.max_bytes}-byte limit")
            return
        self.budget = Budget(*self.limits)      # each input file has a budget of its own
        yield from self.expand(path, SpooledBytes.of_file(path), 0)

    def directory(self, path: str) -> Iterator[Document | Refused]:
        if _is_maildir(path):
            for sub in ("new", "cur"):
                folder = os.path.join(path, sub)
                for name in sorted(os.listdir(folder)):
                    full = os.path.join(folder, name)
                    if not name.startswith(".") and os.path.isfile(full):
                        yield from self.path(full)
        try:
            names = sorted(os.listdir(path))
        except OSError as exc:
            yield Refused(path, f"{path}: cannot list it ({exc.strerror or exc})")
            return
        maildir = _is_maildir(path)
        for name in names:
            full = os.path.join(path, name)
            if maildir and name in ("new", "cur", "tmp"):
                continue
            if os.path.isdir(full):
                hidden = name.startswith(".") and not _is_maildir(full)   # Maildir++ folders are dotted
                if not (os.path.islink(full) or name == "__MACOSX" or hidden):
                    yield from self.directory(full)
            elif not name.startswith(".") and os.path.isfile(full):
                yield from self.path(full)

    def expand(self, origin: str, blob: SpooledBytes, depth: int) -> Iterator[Document | Refused]:
        """The documents inside one blob, opening containers down to max_depth levels."""
        if self.budget.spent:       # refused once already, where it ran out
            return
        head = blob.head(4096)
        kind = sniff(head)
        if kind == "xml":
            yield Document(origin, blob.open)
            return
        if kind == "json":
            yield from self._json(origin, blob)
            return
        if kind is None:
            reason = "empty file" if not head else "neither XML, JSON, gzip, zip nor e-mail"
            yield Refused(origin, f"{origin}: not a report: {reason}")
            return
        if depth >= self.max_depth:
            yield Refused(origin, f"{origin}: containers nested more than {self.max_depth} levels deep")
            return
        try:
            yield from getattr(self, "_" + kind)(origin, blob, depth + 1)
        except Exception as exc:  # hostile bytes can trip any library; the rest must still be read
            text = " ".join(str(exc).split())[:200]
            yield Refused(origin, f"{origin}: cannot read this {kind} ({type(exc).__name__}: {text})")

    def _json(self, origin: str, blob: SpooledBytes,
              notes: tuple = ()) -> Iterator[Document | Refused]:
        if looks_like_tls_report(blob.head(65536)):
            yield Document(origin, blob.open, kind="tlsrpt", notes=notes)
        else:
            yield Refused(origin, f"{origin}: not a report: JSON, but not an SMTP TLS report "
                                  f"(RFC 8460)")

    def _gzip(self, origin: str, blob: SpooledBytes, depth: int) -> Iterator[Document | Refused]:
        try:
            self.budget.open()
            inner = spool(gunzip(blob), self.max_bytes, self.budget)
        except (TooLarge, Unreadable) as exc:
            yield Refused(origin, f"{origin}: {exc}")
            return
        yield from self.expand(origin, inner, depth)

    def _zip(self, origin: str, blob: SpooledBytes, depth: int) -> Iterator[Document | Refused]:
        try:
            for name, chunks in zip_members(blob, self.budget):
                member = origin + SEP + bounded(name)
                try:
                    inner = spool(chunks, self.max_bytes, self.budget)
                except (TooLarge, Unreadable) as exc:
                    yield Refused(member, f"{member}: {exc}")
                    if isinstance(exc, BudgetSpent):
                        return
                    continue
                yield from self.expand(member, inner, depth)
                if self.budget.spent:
                    return
        except Unreadable as exc:
            yield Refused(origin, f"{origin}: {exc}")

    def _email(self, origin: str, blob: SpooledBytes, depth: int) -> Iterator[Document | Refused]:
        raw = blob.read()
        proven = self.attest(raw)
        parts = message_parts(raw, max_depth=self.max_depth, max_parts=self.limits[1] or MAX_PARTS)
        try:
            for item in self._attachments(origin, raw, parts, depth):
                yield _attested(item, proven)
        except MessageRefused as exc:
            yield Refused(origin, f"{origin}: {exc}; the rest of it is not read")

    def _attachments(self, origin: str, raw: bytes, parts,
                     depth: int) -> Iterator[Document | Refused]:
        found, leaf_types = False, set()
        for full_name, content_type, payload in parts:
            leaf_types.add(content_type)
            name = bounded(full_name)
            tls = declares_tls_report(full_name, content_type)
            if tls and sniff(payload[:4096]) is None:
                payload = unbase64(payload)      # some reporters base64 the body twice
            kind = sniff(payload[:4096])
            if kind == "xml" and not looks_like_report_xml(payload[:65536]):
                kind = None
            if kind == "json" and not looks_like_tls_report(payload):
                kind = None
            if kind not in ("gzip", "zip", "xml", "json"):
                if declares_report(full_name, content_type) or tls:
                    found = True
                    yield Refused(origin + SEP + name, f"{origin}{SEP}{name}: attachment is marked "
                                  f"{content_type} but holds no readable gzip, zip, report XML "
                                  f"or TLS report JSON")
                continue
            found = True
            member = origin + SEP + name
            if len(payload) > self.max_bytes:
                yield Refused(member, f"{member}: larger than the {self.max_bytes}-byte limit")
                continue
            if kind == "json" and content_type.endswith("gzip"):
                yield from self._json(member, SpooledBytes(payload), (
                    f"attachment marked {content_type} holds plain JSON",))
                continue
            yield from self.expand(member, SpooledBytes(payload), depth)
        if not found and is_failure_report(raw, leaf_types):
            yield Refused(origin, f"{origin}: a DMARC failure (forensic) report, not an aggregate "
                                  f"or TLS report: rua does not store failure reports")
        elif not found:
            yield Refused(origin, f"{origin}: no DMARC or TLS report attachment found")

    def _mbox(self, origin: str, blob: SpooledBytes, depth: int) -> Iterator[Document | Refused]:
        for number, raw in enumerate(mbox_messages(blob.read()), 1):
            member = f"{origin}{SEP}message {number}"
            try:
                self.budget.open()          # each message counts as one member
            except BudgetSpent as exc:
                yield Refused(member, f"{member}: {exc}")
                return
            yield from self._email(member, SpooledBytes(raw), depth)


def _attested(item: Document | Refused, proven: Provenance) -> Document | Refused:
    """A document the message carries, with what the message proves (a message inside it
    proved its own already)."""
    if isinstance(item, Document) and item.provenance is NOT_FROM_MAIL:
        return dataclasses.replace(item, provenance=proven)
    return item


def _is_maildir(path: str) -> bool:
    return os.path.isdir(os.path.join(path, "cur")) and os.path.isdir(os.path.join(path, "new"))
