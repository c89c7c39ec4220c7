"""Read one aggregate report (RFC 7489 or RFC 9990), streaming its records with flat memory.

The metadata and published policy are complete before the first record is handed out; records
are cleared as they are read. Records that come before the policy they depend on are skipped and
read again from the start once it is known, so memory stays flat whatever the element order. Departures that keep their meaning become parse warnings; what
cannot be read raises ReportError with a one-line reason naming the document.
"""
from __future__ import annotations

import re
from typing import Iterator

from lxml import etree

from ingest.caps import Caps
from ingest.model import Document, ParsedRecord, ParsedReport, ReportError, ReportMeta
from ingest.printable import bounded
from ingest.xml_fields import Fields, meta_from, record_from
from ingest.xml_quick_records import QuickRecords
from ingest.xml_text import NeedsRepair, clean_chunks, strict_chunks

NAMESPACES = {"", "urn:ietf:params:xml:ns:dmarc-2.0", "http://dmarc.org/dmarc-xml/0.1",
              "http://dmarc.org/dmarc-xml/0.2"}
ORDER = ("version", "report_metadata", "policy_published", "extension", "record")
RECORD = ORDER.index("record")      # the last: a record after a record is always in order
# Tags one child of <feedback> may span as it streams in, per auth result the cap allows (a
# result is 10 tags: itself and four fields) and for the rest of a record (real ones: under 100).
TAGS_PER_AUTH_RESULT, TAGS_BESIDE = 16, 4096


def parse(document: Document, *, max_records: int | None = None,
          caps: Caps | None = None) -> ParsedReport:
    """The report in document; raises ReportError when it cannot be read as one, or (while its
    records are read) when it holds more than max_records or passes one of caps (the defaults'
    when None).

    Most documents need no text repair, so the XML parser first reads the bytes as they are; at
    the first sign of anything to repair (or an XML error) the document is read again from its
    start through the repairing pass, with the same outcome as if that pass had run throughout."""
    warnings: list[str] = []
    caps = caps or Caps.of()
    reader = _Reader(document, warnings, strict=True, max_records=max_records, caps=caps)
    try:
        try:
            meta = reader.read_meta()
        except NeedsRepair:
            reader.close()
            reader = _Reader(document, warnings, strict=False, max_records=max_records,
                             caps=caps)
            meta = reader.read_meta()
    except BaseException:
        reader.close()
        raise
    return ParsedReport(document.origin, meta, _streamed(document, reader, warnings), warnings)


def _streamed(document: Document, reader: "_Reader", warnings: list) -> Iterator[ParsedRecord]:
    """reader's records; when a strict reader needs repair, a repairing reader takes over.

    Every record handed out came from bytes the repair leaves as they are (strict_chunks and
    the parser's error log see to it), so the repairing reader reads those records again, the
    same and with the same warnings, and hands out only the ones after them: none is stored
    twice or lost, and memory stays flat."""
    records, handed = reader.records(), 0
    try:
        for record in records:
            handed += 1
            yield record
        return
    except NeedsRepair:
        pass
    finally:
        records.close()
    reader = _Reader(document, warnings, strict=False, max_records=reader.max_records,
                     caps=reader.caps)
    try:
        reader.read_meta()
    except BaseException:
        reader.close()
        raise
    records = reader.records()
    try:
        for _ in range(handed):
            if next(records, None) is None:
                raise RuntimeError(f"{document.origin}: the repaired text holds fewer records")
        yield from records
    finally:
        records.close()


class _Reader:
    def __init__(self, document: Document, warnings: list[str], *, strict: bool,
                 max_records: int | None = None, replay: "_Reader | None" = None,
                 caps: Caps):
        """replay: a reader whose metadata is read, and that skipped records: this one reads
        the document again from its start for every record."""
        self.document, self.origin = document, document.origin
        self.strict = strict
        self.max_records = max_records
        self.caps = caps
        self.warnings = warnings
        if replay is None:
            warnings.clear()               # a second reading notes everything again, in order
        self._seen: set[str] = set() if replay is None else replay._seen
        try:
            self._stream = document.open()
        except OSError as exc:
            raise ReportError(f"{self.origin}: cannot read it ({exc})") from None
        self._events = self._pull()
        self._root = None
        self._closed_root = None
        self._sections: dict[str, object] = {}
        self._sections_iter: Iterator[tuple[str, etree._Element]] = iter(())
        self._meta_value: ReportMeta | None = None if replay is None else replay._meta()
        self._skipped = 0                  # records met before the policy they depend on
        self._reread = set() if replay is None else set(replay._sections)
        self._last_index = -1
        self._count = 0
        self._messages = self._auth_results = 0     # summed over the records read
        self._sections_done = 0                     # children of <feedback> completed
        self._open_tags = 0                         # tags fed since the last one completed
        self._namespaces = set(NAMESPACES)
        self._locals: dict[str, str] = {}
        self.fields = Fields(self.origin, self.note, self._namespaces, caps.auth_results)
        self._quick = QuickRecords(self._namespaces, self.note, caps.auth_results)

    def note(self, key: str, text: str) -> None:
        """Add a warning once per kind, however many records repeat it."""
        if key not in self._seen:
            self._seen.add(key)
            self.warnings.append(text)

    def close(self) -> None:
        self._events.close()
        self._stream.close()

    def fail(self, what: str):
        self._stream.close()
        raise ReportError(f"{self.origin}: {what}")

    def _pull(self) -> Iterator[tuple[str, etree._Element]]:
        # Only the children of <feedback> reach Python; their subtrees are read in one go.
        parser = etree.XMLPullParser(events=("end",), tag=[f"{{*}}{name}" for name in ORDER],
                                     resolve_entities=False, no_network=True, load_dtd=False,
                                     remove_comments=True, remove_pis=True, huge_tree=False,
                                     remove_blank_text=True)
        chunks = (strict_chunks if self.strict else clean_chunks)(self._stream, self.origin,
                                                                  self.note)
        try:
            for chunk in chunks:
                parser.feed(chunk)
                self._check_log(parser)
                done = self._sections_done
                yield from parser.read_events()
                self._check_open(chunk, done)
            self._closed_root = parser.close()
            self._check_log(parser)
            yield from parser.read_events()
        except etree.XMLSyntaxError as exc:
            if self.strict:
                raise NeedsRepair("not well-formed as it is") from None
            self.fail(f"not well-formed XML ({_one_line(exc)})")
        except (ReportError, NeedsRepair):
            self._stream.close()
            raise

    def _check_open(self, chunk: bytes, done: int) -> None:
        """Refuse a child of <feedback> (a record) that spans more tags than its caps allow, as
        its text streams in: the parser never builds more of it than the cap and one chunk."""
        if self._sections_done != done:
            self._open_tags = 0
            return
        self._open_tags += chunk.count(b"<")
        if self._open_tags > TAGS_PER_AUTH_RESULT * self.caps.auth_results + TAGS_BESIDE:
            self.fail(f"a <record> (or other section) runs past "
                      f"{self._open_tags:,} tags, more than a record of "
                      f"{self.caps.auth_results:,} auth results needs (RUA_MAX_AUTH_RESULTS)")

    def _check_log(self, parser) -> None:
        """A strict reading stops before the events of bytes the parser had anything to say
        about: some errors (an undefined prefix) are only raised at the end of the document."""
        if self.strict and len(parser.feed_error_log):
            raise NeedsRepair("the parser logged an error")

    def _sections_in_order(self) -> Iterator[tuple[str, etree._Element]]:
        """Each child of <feedback> once complete, with its local name."""
        for _, element in self._events:
            if self._root is None:
                self._check_root(element.getroottree().getroot())
            if element.getparent() is self._root:    # lxml hands back the same root proxy
                self._sections_done += 1
                name = self._local(element)
                if name is not None:
                    yield name, element
        for child in self._root if self._root is not None else ():
            if isinstance(child.tag, str) and child.tag.rpartition("}")[2] not in ORDER:
                self._local(child, unknown=True)   # trailing unknown elements, never dropped
        if self._root is None:
            if self._closed_root is not None:
                self._check_root(self._closed_root)
            self.fail("the report has no <report_metadata>")

    def _check_root(self, element) -> None:
        self._root = element
        info = element.getroottree().docinfo
        if info.doctype or info.internalDTD is not None or info.externalDTD is not None:
            self.fail("a document type declaration (DOCTYPE) is not accepted in a report")
        qname = etree.QName(element)
        if qname.localname != "feedback":
            self.fail(f"the root element is <{bounded(qname.localname)}>, not <feedback>: "
                      "not a DMARC aggregate report")
        if qname.namespace and qname.namespace not in NAMESPACES:
            self.note("root-ns", f"the report uses the unknown namespace "
                                 f"{bounded(qname.namespace)!r}")
            self._namespaces.add(qname.namespace)

    def _local(self, element, *, unknown: bool = False) -> str | None:
        """The local name of a child of <feedback>, or None (with a warning) for a foreign one."""
        tag = element.tag
        local = self._locals.get(tag)
        if local is None:
            namespace, _, local = tag[1:].rpartition("}") if tag[0] == "{" else ("", "", tag)
            if namespace and namespace not in self._namespaces:
                self.note(f"ns:{local}",
                          f"the element <{local}> in namespace {namespace!r} was skipped")
                if not unknown:
                    self._drop(element)
                return None
            self._locals[tag] = local    # namespaces only ever grow: a known tag stays known
        if unknown and local not in ORDER:
            self.note(f"unknown:{local}", f"the unknown element <{local}> was skipped")
        return local

    def _drop(self, element) -> None:
        """Free an element and whatever came before it; unknown siblings are noted on the way."""
        element.clear()
        parent = element.getparent()
        if parent is not None:
            while True:
                previous = element.getprevious()
                if previous is None:
                    break
                if isinstance(previous.tag, str):
                    self._local(previous, unknown=True)
                del parent[0]

    def _order(self, name: str) -> None:
        index = ORDER.index(name) if name in ORDER else -1
        if 0 <= index < self._last_index:
            self.note("order", f"<{name}> comes after <{ORDER[self._last_index]}>, "
                      "out of the schema's order")
        self._last_index = max(self._last_index, index)

    def read_meta(self) -> ReportMeta:
        """Read up to the point where metadata and policy are both known."""
        self._sections_iter = self._sections_in_order()
        for name, element in self._sections_iter:
            self._take(name, element)
            if "report_metadata" in self._sections and "policy_published" in self._sections:
                break
        missing = [n for n in ("report_metadata", "policy_published") if n not in self._sections]
        if missing:
            self.fail(f"the report has no <{missing[0]}>")
        return self._meta()

    def _take(self, name: str, element) -> None:
        """Keep a section other than a record streamed after the metadata."""
        self._order(name)
        if name == "record" or name in self._reread:
            # A record before its policy is read again later (records()); a section read
            # already is met again when records are read again.
            self._skipped += name == "record"
            self._reread.discard(name)
            self._drop(element)
            self._check_count(self._skipped)
            return
        # <extension> is the schema's place for a reporter's additions: nothing to read or warn.
        if name in self._sections:
            self.fail(f"the report has more than one <{name}>")
        elif name != "extension":
            self._sections[name] = self.fields.section(element)
        self._drop(element)

    def _meta(self) -> ReportMeta:
        if self._meta_value is None:
            self._meta_value = meta_from(self._sections["report_metadata"],
                                         self._sections["policy_published"],
                                         self._sections.get("version"), self.fields)
        return self._meta_value

    def _careful(self, element) -> ParsedRecord:
        """A record the quick reader left, read as the reader always has: warning, refusing."""
        meta = self._meta()
        return record_from(self.fields.section(element), self._count, meta.adkim, meta.aspf,
                           self.fields)

    def _check_count(self, count: int) -> None:
        if self.max_records is not None and count > self.max_records:
            self.fail(f"more than {self.max_records} records (RUA_MAX_RECORDS)")

    def _check_sums(self, record: ParsedRecord) -> None:
        """The report's messages and auth results, summed as its records stream, within caps."""
        self._messages += record.count
        if self._messages > self.caps.report_messages:
            self.fail(str(self.caps.exceeded("report_messages", "messages")))
        self._auth_results += len(record.auth_dkim or ()) + len(record.auth_spf or ())
        if self._auth_results > self.caps.report_auth_results:
            self.fail(str(self.caps.exceeded("report_auth_results", "auth results")))

    def records(self) -> Iterator[ParsedRecord]:
        if self._skipped:
            self.close()
            again = _Reader(self.document, self.warnings, strict=self.strict,
                            max_records=self.max_records, replay=self, caps=self.caps)
            again._sections_iter = again._sections_in_order()
            yield from again.records()
            return
        quick, careful = self._quick.read, self._careful
        try:
            for name, element in self._sections_iter:
                if name == "record":
                    if self._last_index != RECORD:
                        self._order(name)
                    self._count += 1
                    self._check_count(self._count)
                    record = quick(element) or careful(element)
                    self._drop(element)
                    self._check_sums(record)
                    yield record
                else:
                    self._take(name, element)
            if self._count == 0:
                self.fail("the report has no <record>")
        finally:
            self._stream.close()


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return re.sub(r"\s*\(<string>, line \d+\)$", "", text)
