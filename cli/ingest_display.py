"""What `rua ingest` shows while it runs: per-file lines or JSON, progress, the closing summary."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from datetime import date, timedelta

import click

from ingest.printable import printable
from rules.snapshot_facts import WINDOW_DAYS
from store.clock import FIRST_REPORT_DAY, utcnow
from store.encoding import dumps

_FIRST_REPORT_DAY = FIRST_REPORT_DAY.isoformat()
# Without a terminal, a progress line on stderr this often keeps a long batch observable in logs.
PROGRESS_EVERY = 10.0


@dataclass
class Summary:
    """Totals of one batch; records and messages count stored reports only; the days are the
    first and last of every report read, stored, already stored or refused for its domain."""
    files: int = 0
    stored: int = 0
    duplicates: int = 0
    refused: int = 0
    records: int = 0
    messages: int = 0
    sessions: int = 0           # of stored TLS reports (RFC 8460), which have no records
    tls: int = 0
    kept: int = 0               # files the store failed to take, to be read again
    seconds: float = 0.0
    first_day: str | None = None
    last_day: str | None = None

    def add(self, result):
        from ingest.pipeline import STORE_FAILED     # loaded once ingest runs, not for --help
        self.files += 1
        self.refused += len(result.refusals) or int(result.status == "refused")
        self.kept += result.fault == STORE_FAILED
        for report in result.reports:
            self._covers(str(report["day_begin"]), str(report["day_end"]))
            if report["status"] == "stored":
                self.stored += 1
                self.records += report["records"]
                self.messages += report["messages"]
                self.sessions += report.get("sessions", 0)
                self.tls += report.get("kind") == "tlsrpt"
            else:
                self.duplicates += 1
        for refused in result.unmonitored:
            if refused.day_begin is not None:
                self._covers(str(refused.day_begin), str(refused.day_end))

    def line(self) -> str:
        figures = _figures(self.stored - self.tls, self.tls, self.records, self.messages,
                           self.sessions)
        return (f"{_n(self.files, 'file')}: {_n(self.stored, 'report')} stored, "
                f"{_n(self.duplicates, 'duplicate')}, {self.refused:,} refused; "
                f"{figures} in {self.seconds:.1f} s")

    def days_line(self) -> str | None:
        """Which days the reports read cover, and where to look when all are older than the
        scoring window; None when no report was read."""
        if self.first_day is None:
            return None
        line = f"reports cover {self.first_day} to {self.last_day}"
        if date.fromisoformat(self.last_day) <= utcnow().date() - timedelta(days=WINDOW_DAYS):
            line += (f", all before the last {WINDOW_DAYS} days: the overview, scores and health "
                     f"show no data for them (latest_data_date says {self.last_day}); "
                     f"/reports lists them")
        return line

    def _covers(self, first: str, last: str):
        if first < _FIRST_REPORT_DAY:       # a reporter's broken clock, as /reports/date-range
            return
        if self.first_day is None or first < self.first_day:
            self.first_day = first
        if self.last_day is None or last > self.last_day:
            self.last_day = last


class Display:
    """A progress bar on a terminal (stderr), else a progress line every PROGRESS_EVERY seconds;
    no bar without paths (a mailbox's messages are not counted before they are read)."""

    def __init__(self, output: str, paths, summary: Summary):
        self.output, self.summary = output, summary
        self.started = self.last_line = time.monotonic()
        self.settled = 0
        self.gone: dict[bool, bool] = {}
        self.bar = None
        if sys.stderr.isatty() and paths:
            self.bar = click.progressbar(length=_count_files(paths), label="ingesting",
                                         file=sys.stderr, show_pos=True)
            self.bar.__enter__()

    def tick(self, origin: str, status: str):
        """One report or refusal settled inside a file."""
        self.settled += 1
        now = time.monotonic()
        if self.bar is None and now - self.last_line >= PROGRESS_EVERY:
            self.last_line = now
            self.emit(f"rua ingest: {self.summary.files:,} files done, {self.settled:,} reports "
                      f"read, {self.summary.refused:,} refused so far, {now - self.started:.0f} s",
                      err=True)

    def file_done(self, result):
        if self.bar is not None:
            click.echo("\r\x1b[K", nl=False, err=True)   # clear the bar before a line of output
        self.emit(dumps(result.as_dict()).decode() if self.output == "json" else _text(result))
        if self.bar is not None:
            self.bar.update(1)

    def emit(self, line: str, *, err: bool = False):
        """Print a line; a reader that went away (`| head`) must not stop the batch."""
        if self.gone.get(err):
            return
        try:
            click.echo(line, err=err)
        except BrokenPipeError:
            self.gone[err] = True
            _discard(sys.stderr if err else sys.stdout)

    def close(self):
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _text(result) -> str:
    """One line; names from the file (path, members, reasons) with unsafe characters escaped."""
    stored = [r for r in result.reports if r["status"] == "stored"]
    path = printable(result.path)
    if result.status == "refused":
        kept = f" [{_n(len(stored), 'report')} from it stored]" if stored else ""
        return f"refused    {printable(result.error or '')}{kept}"
    if result.status == "duplicate":
        return f"duplicate  {path} ({_n(len(result.reports), 'report')} already stored)"
    records = sum(r["records"] for r in stored)
    messages = sum(r["messages"] for r in stored)
    sessions = sum(r.get("sessions", 0) for r in stored)
    tls = sum(r.get("kind") == "tlsrpt" for r in stored)
    figures = _figures(len(stored) - tls, tls, records, messages, sessions)
    return f"stored     {path} ({_n(len(stored), 'report')}, {figures})"


def _figures(dmarc: int, tls: int, records: int, messages: int, sessions: int) -> str:
    """Records and messages of DMARC reports, sessions of TLS reports (they have no records):
    each said only for the kind stored, both kinds' when neither was."""
    said = []
    if dmarc or not tls:
        said += [_n(records, 'record'), _n(messages, 'message')]
    if tls:
        said.append(_n(sessions, 'session'))
    return ", ".join(said)


def _discard(stream):
    """Point a closed pipe's descriptor at /dev/null, so the final flush at exit cannot fail."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, ValueError, AttributeError):   # not a real descriptor (a test runner's)
        pass


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _count_files(paths) -> int:
    """Files the batch will report on, for the bar's length (directories walked, stdin one)."""
    total = 0
    for path in paths:
        if path != "-" and os.path.isdir(path):
            for _, folders, names in os.walk(path):
                folders[:] = [f for f in folders if not f.startswith(".") and f != "__MACOSX"]
                total += sum(not name.startswith(".") for name in names)
        else:
            total += 1
    return max(total, 1)
