"""What `rua ingest --dry-run` says it would do: reports per organization, the domains it would
add or needs, the days covered and what it would refuse."""
from __future__ import annotations

from collections import Counter, defaultdict

from cli.ingest_display import _n
from ingest.printable import printable


class DryRunPlan:
    """Gathered from each FileResult of a dry run, then said in a few lines."""

    def __init__(self):
        self.per_org: Counter = Counter()                 # org id -> reports it would store
        self.duplicates = 0
        self.unroutable: Counter = Counter()              # domain -> reports
        self.capped: dict[str, Counter] = defaultdict(Counter)   # org name -> domain -> reports
        self.other_refusals = 0

    def add(self, result):
        for report in result.reports:
            if report["status"] == "stored":
                self.per_org[report["org_id"]] += 1
            else:
                self.duplicates += 1
        for refusal in result.unmonitored:
            if refusal.org is None:
                self.unroutable[refusal.domain] += 1
            else:
                self.capped[refusal.org][refusal.domain] += 1
        self.other_refusals += len(result.refusals) - len(result.unmonitored)

    def lines(self, org_names: dict[str, str], added: list[tuple[str, str]],
              days: str | None) -> list[str]:
        """org_names: id -> name; added: the (org id, domain) pairs the run would add."""
        lines = ["dry run: nothing was stored (nor kept aside, whatever the lines above say); "
                 "the run would"]
        for org_id, count in sorted(self.per_org.items(), key=lambda item: -item[1]):
            lines.append(f"  store {_n(count, 'report')} for {org_names.get(org_id, org_id)}")
        if not self.per_org:
            lines.append("  store no report")
        if self.duplicates:
            lines.append(f"  pass over {_n(self.duplicates, 'report')} already stored")
        added_to: dict[str, list[str]] = defaultdict(list)
        for org_id, domain in added:
            added_to[org_names.get(org_id, org_id)].append(domain)
        for name, domains in sorted(added_to.items()):
            lines.append(f"  add {_n(len(domains), 'domain')} to {name}'s monitored domains: "
                         f"{_listed(domains)}")
        if self.unroutable:
            lines.append(f"  refuse {_n(sum(self.unroutable.values()), 'report')} for "
                         f"{_n(len(self.unroutable), 'domain')} no organization monitors: "
                         f"{_counted(self.unroutable)} (give --org ORG, or add them with "
                         f"`rua domain add`)")
        for name, domains in sorted(self.capped.items()):
            lines.append(f"  refuse {_n(sum(domains.values()), 'report')} for "
                         f"{_n(len(domains), 'domain')} past {name}'s caps on domains added by "
                         f"reports: {_counted(domains)} (--add-domains takes them in)")
        if self.other_refusals:
            lines.append(f"  refuse {_n(self.other_refusals, 'other report')} (the lines above "
                         f"say why)")
        if days:
            lines.append(f"  {days}")
        return lines


def _listed(domains) -> str:
    return ", ".join(printable(domain) for domain in sorted(domains))


def _counted(domains: Counter) -> str:
    return ", ".join(f"{printable(domain)} ({count})" for domain, count in sorted(domains.items()))
