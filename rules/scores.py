"""Compliance scores for a domain and an organization over the 30-day scoring window."""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import accumulate

from rules.grades import grade, policy_name, policy_strength
from rules.rates import rate
from shapes.bodies import ComplianceScoreBody, DomainScoreBody
from rules.snapshot_facts import (WINDOW_DAYS, ZERO, DomainFacts, OrgFacts, PublishedPolicy,
                                  SpanTally)


@dataclass(frozen=True)
class Scored:
    """A score with the figures it was made from; score is None without messages in the
    scoring window (last_report tells "never reported" from "reports all older")."""
    score: float | None
    compliance_rate: float
    spf_rate: float
    dkim_rate: float
    policy_strength: float
    tally: SpanTally
    policy: PublishedPolicy | None = None
    last_report: date | None = None

    @property
    def grade(self) -> str:
        return grade(self.score)


def compliance_score(tally: SpanTally, strength: float) -> float:
    """0.4 compliance + 0.2 aligned SPF + 0.2 aligned DKIM + 0.2 policy strength, 2 decimals."""
    if not tally.messages:
        return round(0.2 * strength, 2)
    m = tally.messages
    return round((40.0 * tally.compliant + 20.0 * tally.spf_aligned_pass
             + 20.0 * tally.dkim_aligned_pass) / m
                 + 0.2 * strength, 2)


def scored(tally: SpanTally, strength: float, last_report: date | None,
           policy: PublishedPolicy | None = None) -> Scored:
    """Scored only with messages in the window: older reports alone are no evidence of today."""
    score = compliance_score(tally, strength) if tally.messages else None
    return Scored(score, rate(tally.compliant, tally.messages),
                  rate(tally.spf_aligned_pass, tally.messages),
                  rate(tally.dkim_aligned_pass, tally.messages), round(strength, 2), tally, policy,
                  last_report)


class Cumulative:
    """Prefix sums of one domain's day tallies, so any window sum costs two bisections."""

    def __init__(self, days: dict[date, SpanTally]):
        self.days = sorted(days)
        columns = zip(*((t.messages, t.compliant, t.spf_aligned_pass, t.dkim_aligned_pass,
                             t.forwarded, t.reports)
                        for t in map(days.__getitem__, self.days))) if self.days else [()] * 6
        self.sums = [list(accumulate(column, initial=0)) for column in columns]

    def any_between(self, first: date, last: date) -> bool:
        i = bisect_left(self.days, first)
        return i < len(self.days) and self.days[i] <= last

    def between(self, first: date, last: date) -> SpanTally:
        i, j = bisect_left(self.days, first), bisect_right(self.days, last)
        return SpanTally(*(column[j] - column[i] for column in self.sums)) if j > i else ZERO


def policy_as_of(policies: list[tuple[date, PublishedPolicy]], day: date) -> PublishedPolicy | None:
    """The policy of the latest report on or before `day`."""
    index = bisect_right(policies, day, key=lambda item: item[0])
    return policies[index - 1][1] if index else None


class WindowScores:
    """Window sums and scores per domain and for the organization, as of any day."""

    def __init__(self, facts: OrgFacts):
        self.facts = facts
        self.cumulative = {name: Cumulative(d.days) for name, d in facts.domains.items()}

    def last_report(self, d: DomainFacts, as_of: date) -> date | None:
        """The last day on or before `as_of` the domain's reports covered; None before any."""
        days = self.cumulative[d.name].days
        if not days:
            last = d.last_report_day
            return last if last is not None and last <= as_of else None
        index = bisect_right(days, as_of)
        return days[index - 1] if index else None

    def window(self, name: str, as_of: date) -> SpanTally:
        return self.cumulative[name].between(as_of - timedelta(days=WINDOW_DAYS - 1), as_of)

    def domain(self, name: str, as_of: date | None = None) -> Scored:
        as_of = as_of or self.facts.today
        d = self.facts.domains[name]
        policy = policy_as_of(d.policies, as_of)
        return scored(self.window(name, as_of), policy_strength(policy),
                      self.last_report(d, as_of), policy)

    def org(self, as_of: date | None = None) -> Scored:
        """Rates weighted by messages; policy strength averaged over the domains with reports
        in the scoring window (a domain gone quiet no longer pulls the average)."""
        as_of = as_of or self.facts.today
        total, strengths, last = ZERO, [], None
        for name, d in self.facts.domains.items():
            total = total + self.window(name, as_of)
            day = self.last_report(d, as_of)
            if day is not None and (last is None or day > last):
                last = day
            if self.cumulative[name].any_between(as_of - timedelta(days=WINDOW_DAYS - 1), as_of):
                strengths.append(policy_strength(policy_as_of(d.policies, as_of)))
        strength = sum(strengths) / len(strengths) if strengths else 0.0
        return scored(total, strength, last)


def domain_score_entry(name: str, s: Scored) -> DomainScoreBody:
    return DomainScoreBody(domain=name, score=s.score or 0.0, grade=s.grade,
                           compliance_rate=s.compliance_rate, spf_pass_rate=s.spf_rate,
                           dkim_pass_rate=s.dkim_rate, policy=policy_name(s.policy),
                           total_messages=s.tally.messages)


def _compliance(s: Scored, entries: list[DomainScoreBody]) -> ComplianceScoreBody:
    return ComplianceScoreBody(overall_score=s.score or 0.0, grade=s.grade,
                               compliance_rate=s.compliance_rate, spf_pass_rate=s.spf_rate,
                               dkim_pass_rate=s.dkim_rate, policy_strength=s.policy_strength,
                               domain_scores=entries, total_messages=s.tally.messages,
                               total_reports=s.tally.reports, latest_data_date=s.last_report)


def compliance_doc(window_scores: WindowScores, domain: str | None = None) -> ComplianceScoreBody:
    """The /compliance-score body for the organization, or for one of its domains."""
    if domain is not None:
        s = window_scores.domain(domain)
        return _compliance(s, [domain_score_entry(domain, s)])
    names = sorted(window_scores.facts.domains)
    entries = [domain_score_entry(n, window_scores.domain(n)) for n in names]
    return _compliance(window_scores.org(), entries)


def unknown_domain_compliance(domain: str) -> ComplianceScoreBody:
    """The body for a valid domain the organization has no data for: zeros, grade N/A."""
    s = scored(ZERO, 0.0, None)
    return _compliance(s, [domain_score_entry(domain, s)])
