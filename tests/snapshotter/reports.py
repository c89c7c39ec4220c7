"""Reports on chosen UTC days, stored through the real storer, and figures straight from records."""
from __future__ import annotations

from datetime import date, datetime, timedelta

from peewee import Case, fn

from store.clock import to_epoch
from store.models import Record, Report
from tests.factories import make_report

NOW = datetime(2026, 3, 31, 12, 0, 0)
TODAY = NOW.date()


def report_on(org, domain: str, day: date, records, **meta):
    """A one-day report whose window (and so its midpoint) lies on `day`."""
    begin = to_epoch(datetime(day.year, day.month, day.day))
    return make_report(org, domain, records, date_begin=begin, date_end=begin + 86400, **meta)


def mixed_org(org, days_back=40):
    """Reports over two domains and several IPs, passing and failing, inside and outside the window."""
    for n in range(0, days_back, 3):
        day = TODAY - timedelta(days=n)
        report_on(org, "example.com", day, [
            {"source_ip": "192.0.2.1", "count": 10 + n},
            {"source_ip": "198.51.100.7", "count": 3, "dkim": "fail", "spf": "fail"},
            {"source_ip": "203.0.113.5", "count": 2, "dkim": "fail"},
        ], p="reject" if n < 10 else "none")
        if n % 2 == 0:
            report_on(org, "example.org", day, [
                {"source_ip": "192.0.2.1", "count": 5, "spf": "fail"},
                {"source_ip": "2001:db8::1", "count": 1, "dkim": "fail", "spf": "fail"},
            ], p="quarantine", pct=50)


def straight_from_records(org, first: date, last: date, domain: str | None = None) -> dict:
    """Totals over reports whose window midpoint falls in first..last, summed from Record rows."""
    begin, end = to_epoch(datetime.combine(first, datetime.min.time())), \
        to_epoch(datetime.combine(last + timedelta(days=1), datetime.min.time()))
    middle = (Report.date_begin + Report.date_end) / 2
    def counted(condition):
        return fn.SUM(Case(None, [(condition, Record.count)], 0))

    query = (Record.select(fn.SUM(Record.count),
                           counted((Record.dkim == "pass") | (Record.spf == "pass")),
                           counted(Record.spf == "pass"), counted(Record.dkim == "pass"),
                           fn.COUNT(Record.source_ip.distinct()))
             .join(Report).where(Report.org == org, middle >= begin, middle < end))
    if domain:
        query = query.where(Report.domain == domain)
    messages, compliant, spf, dkim, ips = query.tuples().first()
    return {"messages": int(messages or 0), "compliant": int(compliant or 0), "spf": int(spf or 0),
            "dkim": int(dkim or 0), "ips": ips}


def rate(part, whole):
    return round(100.0 * part / whole, 2) if whole else 0.0
