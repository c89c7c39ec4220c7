"""The rows many reports add to, summed over the reports stored in one commit group and written
once, when the group commits: daily rollups, domain days, source facts, their domains' sources
and DKIM selectors, and each organization's report version.

One statement per table (per 500 rows) for a group, not one per report: on Postgres every
statement costs a round trip, a parse and a plan, and these were most of a report's. Every
table is written in key order, so two ingests writing at once wait for each other in one order,
never in a circle (a deadlock, which Postgres ends by refusing one of them). A report adds its
sums only once it is stored whole: a report that fails leaves the group's sums as they were.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import NamedTuple

from ingest import rollups, source_facts
from store import events
from store.models import Domain


class StoredReport(NamedTuple):
    """What the new-sender news needs of a stored report."""
    org_id: str
    domain: str
    day: date
    last: datetime
    received_at: datetime


class SharedRows:
    """The group's sums, by the key of the row each is added to."""

    def __init__(self):
        self.empty()

    def empty(self) -> None:
        """Hold no sums: a new group's, or a group's once written."""
        self.reports: list[StoredReport] = []
        # (org, domain, day, ip) -> messages, compliant, spf pass, dkim pass, forwarded, reports
        self.daily: dict[tuple, list[int]] = {}
        # (org, domain, day) -> reports, messages, then the latest report's p, pct, testing, as_of
        self.days: dict[tuple, list] = {}
        self.senders: dict[tuple, source_facts.SenderSums] = {}  # (org, domain, ip)
        self.spelled: dict[str, dict[str, set[str]]] = {}      # org -> ip -> its other texts
        self.domains: dict[int, tuple[str, list[str]]] = {}    # id -> source, DKIM selectors

    def domain(self, row: tuple) -> tuple[int, str, list[str]]:
        """A monitored domain's (id, source, DKIM selectors) as the group leaves it, from its
        stored row's (id, source, selectors)."""
        domain_id, source, selectors = row
        if domain_id in self.domains:
            return domain_id, *self.domains[domain_id]
        return domain_id, source, list(Domain.dkim_selectors.python_value(selectors) or [])

    def add(self, org_id: str, domain: str, day: date, first: datetime, last: datetime,
            tally: rollups.ReportTally, messages: int, policy: tuple, as_of: int,
            received_at: datetime, domain_change: tuple | None = None) -> None:
        """One stored report's sums (its per-IP tally, its messages, its policy of as_of), and
        the change it makes to its domain's row: (id, source, DKIM selectors), or None."""
        if domain_change is not None:
            domain_id, source, selectors = domain_change
            self.domains[domain_id] = (source, selectors)
        number = len(self.reports)
        self.reports.append(StoredReport(org_id, domain, day, last, received_at))
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
            self.days[(org_id, domain, day)] = [1, messages, *policy, as_of]
        else:
            counted[0] += 1
            counted[1] += messages
            if as_of >= counted[5]:          # the later report's policy, as the upsert takes it
                counted[2:] = [*policy, as_of]
        for text, ip in tally.spelled.items():
            if text != ip:
                self.spelled.setdefault(org_id, {}).setdefault(ip, set()).add(text)

    def write(self) -> None:
        """Add the sums to their rows and move each organization's report version, then start
        over empty. Inside the transaction that stored the reports."""
        if not self.reports:
            return
        for domain_id, (source, selectors) in sorted(self.domains.items()):
            Domain.update(source=source, dkim_selectors=selectors).where(
                Domain.id == domain_id).execute()
        rollups.save_daily([(*key, *sums) for key, sums in sorted(self.daily.items())])
        rollups.save_domain_days([(*key, *counts) for key, counts in sorted(self.days.items())])
        source_facts.save(self.senders, self.spelled, self.reports)
        for org_id in sorted({report.org_id for report in self.reports}):
            events.reports_changed(org_id)
        self.empty()
