"""Every record of a period, for `rua export`: read in pages, so memory holds a page, not the
period; and the reports of the period whose records retention deleted."""
from __future__ import annotations

from datetime import date
from typing import Iterator, NamedTuple

from peewee import fn

from store.models import Record, Report

PAGE = 1000     # records read at a time

# The columns of an exported record, in order: its report's, then its own.
REPORT_COLUMNS = (Report.id, Report.org_name, Report.report_id, Report.domain, Report.day_begin,
                  Report.day_end)
RECORD_COLUMNS = (Record.source_ip, Record.count, Record.disposition, Record.dkim, Record.spf,
                  Record.header_from, Record.envelope_from, Record.envelope_to,
                  Record.classification, Record.reasons, Record.auth_dkim, Record.auth_spf)
NAMES = ("report", "reporter", "reporter_report_id", "domain", "day_begin", "day_end",
         *(field.name for field in RECORD_COLUMNS))


class Period(NamedTuple):
    """An organization's reports from day_from (by day_begin) to day_to (by day_end), as the
    API's /reports from and to choose them, optionally of one policy domain."""
    org_id: str
    day_from: date
    day_to: date
    domain: str | None = None


class PrunedReports(NamedTuple):
    """The period's reports whose records retention deleted: how many, their first and last day."""
    reports: int
    first_day: str | None       # YYYY-MM-DD
    last_day: str | None


def records(period: Period, size: int = PAGE) -> Iterator[tuple]:
    """Each record of the period as a tuple of NAMES' values (days as dates, JSON columns as
    lists), in the order stored, read PAGE at a time."""
    after = 0
    while True:
        rows = list(_page(period, after, size))
        for row in rows:
            yield row[1:]
        if len(rows) < size:
            return
        after = rows[-1][0]


def pruned(period: Period) -> PrunedReports:
    query = (Report.select(fn.COUNT(Report.id), fn.MIN(Report.day_begin), fn.MAX(Report.day_end))
             .where(_in(period) & Report.records_pruned_at.is_null(False)))
    count, first, last = query.tuples().get()
    return PrunedReports(count, _day(first), _day(last))


def _day(value) -> str | None:
    """An aggregate's day: text on SQLite, a date on Postgres."""
    return None if value is None else str(value)[:10]


def _page(period: Period, after: int, size: int):
    return (Record.select(Record.id, *REPORT_COLUMNS, *RECORD_COLUMNS)
            .join(Report, on=(Record.report == Report.id))
            .where((Record.org == period.org_id) & (Record.id > after) & _in(period))
            .order_by(Record.id).limit(size).tuples())


def _in(period: Period):
    cond = ((Report.org == period.org_id) & (Report.day_begin >= period.day_from)
            & (Report.day_end <= period.day_to))
    if period.domain is not None:
        cond &= Report.domain == period.domain
    return cond
