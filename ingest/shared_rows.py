"""What a commit group's reports write together, once, when the group commits (or sooner, when
a report needs the store to show what the group holds): the daily rollups, domain days, source
facts, their domains' sources and DKIM selectors and each organization's report version, and on
Postgres the reports' own rows and records too.

One statement per table (per 500 rows) for a group, not one per report: on Postgres every
statement costs a round trip, a parse and a plan, and these were most of a report's. Every
table is written in key order, so two ingests writing at once wait for each other in one order,
never in a circle (a deadlock, which Postgres ends by refusing one of them). A report joins the
group only once it is stored whole: a report that fails leaves the group as it was.

A report row is written with ON CONFLICT DO NOTHING: when another process stored the same report
(its dedupe key) since this one looked, this one is not stored, nor its records or sums, and its
id joins `lost`, which the group turns into a refusal (ingest/commits.py).
"""
from __future__ import annotations

from datetime import date, datetime
from typing import NamedTuple

from ingest import rollups, source_facts
from ingest.record_writer import RECORD_FIELDS
from store import compiled as sql
from store import events
from store.models import Domain, Record, Report


class StoredReport(NamedTuple):
    """What the new-sender news needs of a stored report."""
    org_id: str
    domain: str
    day: date
    last: datetime
    received_at: datetime


class Sums(NamedTuple):
    """One stored report's part of the shared rows."""
    report: StoredReport
    first: datetime
    tally: rollups.ReportTally
    messages: int
    policy: tuple          # p, pct, testing
    as_of: int


class Rows(NamedTuple):
    """A report's own rows, for the group to write: its row (in `REPORT_FIELDS` order), the
    records its writer has not written yet (ingest/record_writer.py), and its dedupe key."""
    report: tuple
    records: list
    key: str


REPORT_FIELDS = sql.columns(Report)


class SharedRows:
    """The group's stored reports: their sums, and the rows it writes for them."""

    def __init__(self):
        self.lost: set[str] = set()     # ids another process stored first, for the group to tell
        self.empty()

    def empty(self) -> None:
        """Hold nothing: a new group's, or a group's once written."""
        self.sums: dict[str, Sums] = {}        # report id -> its sums
        self.rows: dict[str, Rows] = {}        # report id -> its rows, when the group writes them
        self.keys: set[str] = set()            # the dedupe keys of those rows
        self.records = 0                       # the records among those rows
        self.domains: dict[int, tuple[str, list[str]]] = {}    # id -> source, DKIM selectors

    def holds(self, key: str) -> bool:
        """Whether a report with this dedupe key waits to be written (a copy of it must not be
        judged before it is)."""
        return key in self.keys

    def domain(self, row: tuple) -> tuple[int, str, list[str]]:
        """A monitored domain's (id, source, DKIM selectors) as the group leaves it, from its
        stored row's (id, source, selectors)."""
        domain_id, source, selectors = row
        if domain_id in self.domains:
            return domain_id, *self.domains[domain_id]
        return domain_id, source, list(Domain.dkim_selectors.python_value(selectors) or [])

    def add(self, report_id: str, org_id: str, domain: str, day: date, first: datetime,
            last: datetime, tally: rollups.ReportTally, messages: int, policy: tuple,
            as_of: int, received_at: datetime, domain_change: tuple | None = None,
            rows: Rows | None = None) -> None:
        """One stored report: its sums (its per-IP tally, its messages, its policy of as_of),
        the change it makes to its domain's row ((id, source, DKIM selectors), or None), and its
        own rows when the group writes them (None: written already)."""
        if domain_change is not None:
            domain_id, source, selectors = domain_change
            self.domains[domain_id] = (source, selectors)
        self.sums[report_id] = Sums(StoredReport(org_id, domain, day, last, received_at), first,
                                    tally, messages, policy, as_of)
        if rows is not None:
            self.rows[report_id] = rows
            self.keys.add(rows.key)
            self.records += len(rows.records)

    def write(self) -> None:
        """Write the reports' rows, then add the sums of those stored to their rows and move
        each organization's report version; then start over empty. Inside the transaction that
        stored the reports."""
        if not self.sums:
            return
        self.write_rows()
        stored = [sums for report_id, sums in self.sums.items() if report_id not in self.lost]
        for domain_id, (source, selectors) in sorted(self.domains.items()):
            Domain.update(source=source, dkim_selectors=selectors).where(
                Domain.id == domain_id).execute()
        if stored:
            summed = _Summed(stored)
            rollups.save_daily([(*key, *sums) for key, sums in sorted(summed.daily.items())])
            rollups.save_domain_days([(*key, *counts)
                                      for key, counts in sorted(summed.days.items())])
            source_facts.save(summed.senders, summed.spelled, summed.reports)
            for org_id in sorted({report.org_id for report in summed.reports}):
                events.reports_changed(org_id)
        self.empty()

    def write_rows(self) -> None:
        """Insert the waiting report rows, then the records of those stored; the ids of those
        another process stored first join `lost` (their records written already are deleted).
        Their sums wait for write(): rows no other report shares, so this takes no lock another
        group could be waiting on while holding one this group wants."""
        if not self.rows:
            return
        ids = list(self.rows)
        stored = set(sql.insert_rows(Report, REPORT_FIELDS, [rows.report for rows in
                                                             self.rows.values()],
                                     ignore=True, returning=Report.id))
        lost = set(ids) - stored
        if lost:
            Record.delete().where(Record.report.in_(sorted(lost))).execute()
        records = [record for report_id in ids if report_id in stored
                   for record in self.rows[report_id].records]
        sql.insert_rows(Record, RECORD_FIELDS, records, converted=True)
        self.lost |= lost
        self.rows, self.keys, self.records = {}, set(), 0


class _Summed:
    """The stored reports' sums, by the key of the row each is added to."""

    def __init__(self, stored: list[Sums]):
        self.reports: list[StoredReport] = []
        # (org, domain, day, ip) -> messages, compliant, spf pass, dkim pass, forwarded, reports
        self.daily: dict[tuple, list[int]] = {}
        # (org, domain, day) -> reports, messages, then the latest report's p, pct, testing, as_of
        self.days: dict[tuple, list] = {}
        self.senders: dict[tuple, source_facts.SenderSums] = {}  # (org, domain, ip)
        self.spelled: dict[str, dict[str, set[str]]] = {}      # org -> ip -> its other texts
        for sums in stored:
            self._add(sums)

    def _add(self, stored: Sums) -> None:
        report, first, tally = stored.report, stored.first, stored.tally
        org_id, domain, day, last = report.org_id, report.domain, report.day, report.last
        number = len(self.reports)
        self.reports.append(report)
        for ip, sums in tally.by_ip.items():
            daily = self.daily.setdefault((org_id, domain, day, ip), [0, 0, 0, 0, 0, 0])
            for index, value in enumerate(sums):
                daily[index] += value
            daily[5] += 1
            held = tally.dispositions.get(ip, (0, 0))
            sender = self.senders.get((org_id, domain, ip))
            if sender is None:
                self.senders[(org_id, domain, ip)] = source_facts.SenderSums.of(
                    first, last, sums, held, number)
            else:
                sender.add(first, last, sums, held)
        counted = self.days.get((org_id, domain, day))
        if counted is None:
            self.days[(org_id, domain, day)] = [1, stored.messages, *stored.policy,
                                                stored.as_of]
        else:
            counted[0] += 1
            counted[1] += stored.messages
            if stored.as_of >= counted[5]:   # the later report's policy, as the upsert takes it
                counted[2:] = [*stored.policy, stored.as_of]
        for text, ip in tally.spelled.items():
            if text != ip:
                self.spelled.setdefault(org_id, {}).setdefault(ip, set()).add(text)
