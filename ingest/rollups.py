"""Daily rollups: per-IP sums of one report kept in memory, then upserted with a group's others
(ingest/shared_rows.py).

DailyRollup per (org, policy domain, day, source_ip) and DomainDay per (org, domain, day), where
day is the UTC day holding the midpoint of the report window. The upserts add to existing rows
(ON CONFLICT ... DO UPDATE), so SQLite and Postgres accumulate alike and nothing is read back.
"""
from __future__ import annotations

from rules.verdicts import AUTHENTICATED, LIKELY_FORWARDED
from store.addresses import canonical_ip
from store import compiled as sql
from store.models import DailyRollup, DomainDay

_HELD = {"quarantine": 0, "reject": 1}
_SUMS = ("messages", "compliant", "spf_aligned_pass", "dkim_aligned_pass", "forwarded")


class ReportTally:
    """Message counts of one report by source IP (its canonical text, so each address is one
    row whatever its spelling), in the DailyRollup columns, and [quarantined, rejected]."""

    def __init__(self):
        self.by_ip: dict[str, list[int]] = {}
        self.dispositions: dict[str, list[int]] = {}
        self.spelled: dict[str, str] = {}       # each source_ip text -> its canonical text

    def in_address_order(self) -> list[tuple[str, list[int]]]:
        """(ip, sums) by address: every report writes the rows other reports may share in one
        order, so two stored at once never each wait for the other (a deadlock, which Postgres
        ends by refusing one of them)."""
        return sorted(self.by_ip.items())

    def add(self, source_ip: str, count: int, dkim: str, spf: str, classification: str,
            disposition: str = "none"):
        ip = self.spelled.get(source_ip)
        if ip is None:
            ip = self.spelled[source_ip] = canonical_ip(source_ip)
        sums = self.by_ip.get(ip)
        if sums is None:
            sums = self.by_ip[ip] = [0, 0, 0, 0, 0]
        if disposition in _HELD:
            held = self.dispositions.setdefault(ip, [0, 0])
            held[_HELD[disposition]] += count
        sums[0] += count
        if classification == AUTHENTICATED:        # exactly a DMARC pass (rules/verdicts.py)
            sums[1] += count
        if spf == "pass":
            sums[2] += count
        if dkim == "pass":
            sums[3] += count
        if classification == LIKELY_FORWARDED:
            sums[4] += count


def save_daily(rows: list[tuple]):
    """Add (org, domain, day, source_ip, *sums, reports) rows, in key order, to DailyRollup."""
    sums = [getattr(DailyRollup, name) for name in (*_SUMS, "reports")]
    key = [DailyRollup.org, DailyRollup.domain, DailyRollup.day, DailyRollup.source_ip]
    sql.insert_rows(DailyRollup, key + sums, rows, conflict=key, add=sums)


def save_domain_days(rows: list[tuple]):
    """Count reports and messages on their domain's day: (org, domain, day, reports, messages,
    p, pct, testing, as_of) rows in key order. A row's policy wins unless a later report's is
    there; the policy columns read the row as it was before."""
    later = [DomainDay.policy_p, DomainDay.policy_pct, DomainDay.policy_testing,
             DomainDay.policy_as_of]
    key = [DomainDay.org, DomainDay.domain, DomainDay.day]
    counts = [DomainDay.reports, DomainDay.messages]
    sql.insert_rows(DomainDay, key + counts + later, rows, conflict=key, add=counts,
                    take=later, newer=DomainDay.policy_as_of)
