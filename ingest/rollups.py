"""Daily rollups: per-IP sums of one report kept in memory, then upserted in a few statements.

DailyRollup per (org, policy domain, day, source_ip) and DomainDay per (org, domain, day), where
day is the UTC day holding the midpoint of the report window. The upserts add to existing rows
(ON CONFLICT ... DO UPDATE), so SQLite and Postgres accumulate alike and nothing is read back.
"""
from __future__ import annotations

from peewee import EXCLUDED

from ingest.bulk import insert_rows
from ingest.classify import LIKELY_FORWARDED
from store.models import DailyRollup, DomainDay

_SUMS = ("messages", "compliant", "spf_aligned_pass", "dkim_aligned_pass", "forwarded")


class Tally:
    """Message counts of one report by source IP, in the DailyRollup columns."""

    def __init__(self):
        self.by_ip: dict[str, list[int]] = {}

    def add(self, source_ip: str, count: int, dkim: str, spf: str, classification: str):
        sums = self.by_ip.get(source_ip)
        if sums is None:
            sums = self.by_ip[source_ip] = [0, 0, 0, 0, 0]
        sums[0] += count
        if dkim == "pass" or spf == "pass":
            sums[1] += count
        if spf == "pass":
            sums[2] += count
        if dkim == "pass":
            sums[3] += count
        if classification == LIKELY_FORWARDED:
            sums[4] += count


def save_daily(org_id: str, domain: str, day, tally: Tally):
    """Add the report's per-IP sums to DailyRollup, one row more in `reports` for each IP."""
    sums = [getattr(DailyRollup, name) for name in (*_SUMS, "reports")]
    key = [DailyRollup.org, DailyRollup.domain, DailyRollup.day, DailyRollup.source_ip]
    rows = [(org_id, domain, day, ip, *counts, 1) for ip, counts in tally.by_ip.items()]
    insert_rows(DailyRollup, key + sums, rows, conflict=key, add=sums)


def save_domain_day(org_id: str, domain: str, day, messages: int, policy: dict, as_of: int):
    """Count the report on its domain's day; its policy wins unless a later report's is there."""
    (DomainDay.insert(org=org_id, domain=domain, day=day, reports=1, messages=messages,
                      policy_as_of=as_of, **policy)
     .on_conflict(conflict_target=[DomainDay.org, DomainDay.domain, DomainDay.day],
                  update={DomainDay.reports: DomainDay.reports + EXCLUDED.reports,
                          DomainDay.messages: DomainDay.messages + EXCLUDED.messages})
     .execute())
    (DomainDay.update(policy_as_of=as_of, **policy)
     .where(DomainDay.org == org_id, DomainDay.domain == domain, DomainDay.day == day,
            DomainDay.policy_as_of <= as_of)
     .execute())
