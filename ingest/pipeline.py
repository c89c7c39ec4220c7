"""Ingest a batch: every input file found, parsed and stored, one result per file.

A file may hold several reports (a zip, an e-mail with attachments, an mbox). Each report is
stored or refused on its own, so a bad member never costs the good ones beside it. A file's status:
  refused    at least one member was refused (error names the first, and how many more); the
             reports stored from the same file stay stored and are listed in `reports`;
  stored     otherwise, when at least one report was new;
  duplicate  when every report in it was already stored.
Input files are only read, never moved, modified or deleted. The database must be connected.
A FileResult is handed out only once every report stored from its file is committed
(ingest/commits.py groups the commits).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Iterable, Iterator, NamedTuple

from ingest import routing, tls_report, xml_report
from ingest.commits import Group
from ingest.files import SEP, Attest, iter_documents, iter_message
from ingest.deadline import MessageDeadline
from ingest.caps import Caps
from ingest.model import Document, NotMonitored, RefusedInput, ReportError
from ingest.printable import bounded, printable, report_named
from ingest.storing import DomainCaps, store_report
from ingest.tls_storing import store_tls_report
from rules.windows import window_days
from store.failures import is_store_failure
from rules.authenticity import required_domains
from store.report_keys import content_digest

# Why something was refused when it was not for a fault of the report itself (FileResult.fault):
# the store failed (the input is to be read again, not blamed), or an error rua cannot classify.
STORE_FAILED, UNEXPECTED = "store failed", "unexpected"


class Unmonitored(NamedTuple):
    """A report refused for its policy domain (ingest.model.NotMonitored), with its days."""
    domain: str
    org: str | None             # the organization past its caps; None: nobody monitors it
    day_begin: date | None      # None: the report's window is no usable time
    day_end: date | None


@dataclass
class FileResult:
    """What became of one input file; reports lists those stored or found already stored."""
    path: str
    status: str = "stored"
    error: str | None = None
    reports: list[dict] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    # STORE_FAILED or UNEXPECTED when a refusal was not the report's fault (STORE_FAILED wins).
    fault: str | None = None
    unmonitored: list[Unmonitored] = field(default_factory=list)   # refusals for a domain

    def as_dict(self) -> dict:
        """The JSON shape, every text from outside with its unsafe characters escaped."""
        return {"path": printable(self.path), "status": self.status,
                "error": None if self.error is None else printable(self.error),
                "reports": [{name: printable(bounded(value)) if isinstance(value, str) else value
                             for name, value in report.items()} for report in self.reports]}

    def store_failed(self, exc: Exception) -> None:
        """The store failed to take the commit group holding this file's reports: none of them
        is stored, and the file is refused as a store failure, to be read again."""
        self.reports = []
        _store_failed(self, self.path, exc)
        self.settle()

    def lose(self, lost: set[str]) -> None:
        """The reports of this file whose ids are in lost were not stored after all: another
        process stored the same report first (ingest/shared_rows.py). Each becomes a refusal
        that asks for the input again (a store failure), which then finds the stored copy."""
        kept = [report for report in self.reports if report["id"] not in lost]
        if len(kept) == len(self.reports):
            return
        for report in self.reports:
            if report["id"] in lost:
                self.refusals.append(
                    f"{self.path}: {report_named(report['org_name'], report['report_id'])} for "
                    f"{report['domain']}: another process stored the same report at the same "
                    "moment, so this copy was not stored; read it again to have it judged as "
                    "a copy")
        self.reports, self.fault = kept, STORE_FAILED
        self.settle()

    def settle(self):
        if self.refusals:
            more = len(self.refusals) - 1
            self.status = "refused"
            self.error = self.refusals[0] + (f" (and {more} more refused)" if more else "")
        elif not self.reports:
            self.status, self.error = "refused", f"{self.path}: no report found"
        elif any(r["status"] == "stored" for r in self.reports):
            self.status = "stored"
        else:
            self.status = "duplicate"
        return self


def ingest_paths(paths: Iterable[str], *, config, org=None, add_domains: bool = False,
                 progress: Callable[[str, str], None] | None = None,
                 attest: Attest | None = None) -> Iterator[FileResult]:
    """One FileResult per input file (a directory gives one per file in it, "-" reads stdin).

    org: an Organization (or its id or name) that takes every report instead of routing; an
    unknown one raises routing.UnknownOrganization before any input is read.
    add_domains: the reports' policy domains join org's domains past the caps (DomainCaps).
    progress(origin, status) is called as each report or refusal inside a file is settled.
    attest: what a message's DKIM signatures prove (dnscheck/mail_signatures.py; None: not
    checked), one for the batch, so each key is looked up once.
    """
    org = routing.find_org(org) if org is not None else None   # an unknown org stops at once
    group = Group()
    quiet = (lambda origin, status: None)
    caps = DomainCaps.of(config, add_domains=add_domains)
    try:
        for path in paths:
            for result in _ingest_path(str(path), config, org, progress or quiet, group, caps,
                                       attest):
                yield from group.hold(result)
        yield from group.commit()
    except BaseException:
        group.rollback()
        raise


def ingest_message(origin: str, data: bytes, *, config, org=None,
                   progress: Callable[[str, str], None] | None = None,
                   attest: Attest | None = None) -> FileResult:
    """The FileResult of one message read from a mailbox (origin names it), as for a file,
    within RUA_MAX_MESSAGE_SECONDS: past it, what is left of the message is refused.
    attest: as for ingest_paths, one for the whole mailbox."""
    org = routing.find_org(org) if org is not None else None
    items = iter_message(origin, data, attest=attest, **_limits(config))
    quiet = (lambda origin, status: None)
    budget = MessageDeadline(config.max_message_seconds)
    group = Group()
    try:
        result = next(_ingest_items(origin, items, org, progress or quiet, config, group,
                                    DomainCaps.of(config), budget))
        group.hold(result)
        group.commit()
    except BaseException:
        group.rollback()
        raise
    return result


def _ingest_path(path, config, org, progress, group, caps, attest) -> Iterator[FileResult]:
    items = iter_documents(path, attest=attest, **_limits(config))
    yield from _ingest_items(path, items, org, progress, config, group, caps)


def _limits(config) -> dict:
    return dict(max_bytes=config.max_report_bytes, max_depth=config.max_archive_depth,
                max_input_bytes=config.max_input_bytes, max_members=config.max_members)


def _ingest_items(path, items, org, progress, config, group, caps: DomainCaps,
                  budget: MessageDeadline | None = None) -> Iterator[FileResult]:
    current = None
    while True:
        if budget is not None and budget.passed():
            current = current or FileResult(path)
            current.refusals.append(f"{path}: {budget.reason()}; the rest of it is not read")
            break
        try:
            item = next(items)
        except StopIteration:
            break
        except Exception as exc:        # a fault in one input must not stop the batch
            current = current or FileResult(path)
            current.refusals.append(f"{path}: cannot read it ({_one_line(exc)})")
            break
        name = "-" if path == "-" else item.origin.split(SEP)[0]
        if current is not None and current.path != name:
            yield current.settle()
            current = None
        current = current or FileResult(name)
        status = _ingest_one(item, current, org, config, group, caps, budget)
        progress(item.origin, status)
    yield (current or FileResult(path)).settle()


def _ingest_one(item, result: FileResult, org, config, group, caps: DomainCaps,
                budget: MessageDeadline | None = None) -> str:
    """Store one document (or note one refusal) into result; the report's status."""
    if isinstance(item, RefusedInput):
        result.refusals.append(item.reason)
        return "refused"
    if item.kind == "tlsrpt":
        return _ingest_tls(item, result, org, config, budget)
    parsed, opened = None, []

    def open_tracked():
        opened.append(item.open())
        return opened[-1]
    try:
        parsed = xml_report.parse(Document(item.origin, open_tracked),
                                  max_records=config.max_records, caps=Caps.of(config))
        with item.open() as stream:
            parsed.digest = content_digest(stream)
        if budget is not None:
            parsed.records = budget.watch(parsed.records)
        group.open()
        stored = store_report(parsed, org=org, caps=caps, document=item,
                              required=required_domains(config.require_dkim_from),
                              shared=group.shared)
        group.stored()
    except Exception as exc:            # a fault in one input must not stop the batch
        refuse(result, item.origin, exc)
        if isinstance(exc, NotMonitored):
            result.unmonitored.append(_unmonitored(exc, parsed.meta))
        return "refused"
    finally:
        # A duplicate or unroutable report is never read to its end: close what parsing opened.
        close = getattr(getattr(parsed, "records", None), "close", None)
        for done in ([close] if close else []) + [stream.close for stream in opened]:
            done()
    report = stored.report
    result.reports.append({
        "id": report.id, "report_id": report.report_id, "org_name": report.org_name,
        "org_id": report.org_id, "day_begin": report.day_begin, "day_end": report.day_end,
        "domain": report.domain, "records": report.record_count,
        "messages": report.total_messages, "compliant": report.compliant_messages,
        "status": stored.status})
    return stored.status


def _unmonitored(refusal: NotMonitored, meta) -> Unmonitored:
    try:
        first, last, _ = window_days(meta.date_begin, meta.date_end)
    except ValueError:
        first = last = None
    return Unmonitored(refusal.domain, refusal.org, first, last)


def _ingest_tls(item: Document, result: FileResult, org, config,
                budget: MessageDeadline | None = None) -> str:
    """Store one TLS report (or note its refusal) into result; the report's status. It carries
    sessions, not records or messages: those counts stay 0 and `sessions` says how many.
    Its caps bound the parse; the budget is looked at once it is parsed, before it is stored."""
    caps = Caps.of(config)
    try:
        with item.open() as stream:
            parsed = tls_report.parse(stream.read(), item.origin, caps)
        if budget is not None and budget.passed():
            raise ReportError(budget.reason())
        stored = store_tls_report(parsed, org=org, notes=item.notes, caps=caps,
                                  provenance=item.provenance,
                                  required=required_domains(config.require_dkim_from))
    except Exception as exc:            # a fault in one input must not stop the batch
        refuse(result, item.origin, exc)
        return "refused"
    report = stored.report
    result.reports.append({
        "id": report.id, "report_id": report.report_id, "org_name": report.org_name,
        "org_id": report.org_id, "day_begin": report.day_begin, "day_end": report.day_end,
        "domain": ", ".join(report.policy_domains), "kind": "tlsrpt", "records": 0,
        "messages": 0, "compliant": 0,
        "sessions": report.successful_sessions + report.failed_sessions,
        "status": stored.status})
    return stored.status


def refuse(result: FileResult, origin: str, exc: Exception) -> None:
    """Note in result the one line saying why a document was refused: a ReportError's reason;
    else the error, and in result.fault whether it was the store's failure or unexpected."""
    if isinstance(exc, ReportError):
        result.refusals.append(_naming(origin, str(exc)))
        return
    if is_store_failure(exc):
        _store_failed(result, origin, exc)
        return
    result.fault = result.fault or UNEXPECTED
    result.refusals.append(f"{origin}: unexpected error ({_one_line(exc)})")


def _store_failed(result: FileResult, origin: str, exc: Exception) -> None:
    result.fault = STORE_FAILED
    result.refusals.append(f"{origin}: the store failed ({_one_line(exc)})")


def _naming(origin: str, message: str) -> str:
    return message if message.startswith(origin) else f"{origin}: {message}"


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]
