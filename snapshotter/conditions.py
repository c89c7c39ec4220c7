"""Which report- and time-driven events hold for a domain: pure rules over plain values.

Rules (docs/alerts.md; severities as /enums lists them):
- `compliance_drop` (warning): compliance over the last 7 days (today included) is at least 10
  points below that of the 30 days before them, and each span holds at least MIN_MESSAGES
  messages (fewer make a rate that one bad forwarder can swing). Cleared when that no longer
  holds, including when either span has too few messages to say.
- `policy_changed` (info): the p= of a domain's reports differs from the p= of its reports
  before, the change seen within NEWS_DAYS of today. Key `policy_changed:<domain>`, the one the
  live DNS check raises, so one event is open whichever noticed first. News, not a fault: any
  policy_changed clears NEWS_DAYS after it was raised.
- `no_reports` (warning): a domain that has received reports has none dated within the last
  NO_REPORTS_DAYS days; cleared by the next report.
- `report_parse_warnings` (info): the newest report from a reporter about a domain carried parse
  warnings; once per reporter, domain and UTC day (the day is in the key), a newer day's
  replacing the older; cleared when a newer report from that reporter parses clean, or
  NEWS_DAYS after it was raised when none has come.
- `quota_near_cap` (warning, raised by store/usage.py): cleared once its hour has ended.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from rules.rates import rate
from rules.snapshot_facts import PublishedPolicy, SpanTally
from snapshotter.verdicts import percent
from store.event_types import EventToRaise, Outcome

RECENT_DAYS = 7
BEFORE_DAYS = 30
DROP_POINTS = 10.0
MIN_MESSAGES = 100          # in each span, before a compliance drop means something
NO_REPORTS_DAYS = 3
NEWS_DAYS = 7
HOUR = 3600
QUOTA_PREFIX = "quota_near_cap:"
HEALTH_LINK = "/domains/{}/health"


def key(type_: str, domain: str) -> str:
    return f"{type_}:{domain}"


def _sum(days: dict[date, SpanTally], first: date, last: date) -> SpanTally:
    total = SpanTally()
    for day, tally in days.items():
        if first <= day <= last:
            total = total + tally
    return total


def compliance_drop(domain: str, days: dict[date, SpanTally], today: date) -> Outcome:
    recent = _sum(days, today - timedelta(days=RECENT_DAYS - 1), today)
    before_last = today - timedelta(days=RECENT_DAYS)
    before = _sum(days, before_last - timedelta(days=BEFORE_DAYS - 1), before_last)
    k = key("compliance_drop", domain)
    if min(recent.messages, before.messages) < MIN_MESSAGES:
        return Outcome(cleared=[k])
    now_rate = rate(recent.compliant, recent.messages)
    then_rate = rate(before.compliant, before.messages)
    if then_rate - now_rate < DROP_POINTS:
        return Outcome(cleared=[k])
    return Outcome(raised=[EventToRaise(
        "compliance_drop", k,
        f"DMARC compliance of {domain} fell from {percent(then_rate)} to "
        f"{percent(now_rate)}",
        f"Over the last {RECENT_DAYS} days {percent(now_rate)} of "
        f"{recent.messages:,} messages from {domain} passed DMARC, against "
        f"{percent(then_rate)} in the {BEFORE_DAYS} days before. Look for a new or "
        "changed sender among the top senders.", HEALTH_LINK.format(domain), domain)])


def policy_change(domain: str, policies: list[tuple[date, PublishedPolicy]],
                  today: date) -> Outcome:
    """Raise when the reports' p= changed within NEWS_DAYS (clearing is by age, see expired)."""
    seen = [(day, policy.p) for day, policy in policies if policy.p]
    for (_, before), (day, after) in zip(seen[::-1][1:], seen[::-1]):
        if before == after:
            continue
        if (today - day).days >= NEWS_DAYS:
            break
        return Outcome(raised=[EventToRaise(
            "policy_changed", key("policy_changed", domain),
            f"DMARC policy of {domain} changed from p={before} to p={after}",
            f"Reports for {domain} from {day.isoformat()} say the published policy is "
            f"p={after} (they said p={before} before). If nobody here changed it, check who "
            "can edit its DNS.", HEALTH_LINK.format(domain), domain)])
    return Outcome()


def no_reports(domain: str, last_report_day: date | None, today: date) -> Outcome:
    k = key("no_reports", domain)
    if last_report_day is None:
        return Outcome()
    if (today - last_report_day).days <= NO_REPORTS_DAYS:
        return Outcome(cleared=[k])
    return Outcome(raised=[EventToRaise(
        "no_reports", k, f"No DMARC reports for {domain} since "
        f"{last_report_day.isoformat()}",
        f"No aggregate report about {domain} has arrived for more than {NO_REPORTS_DAYS} days. "
        "Check that its DMARC record still asks for reports (rua=) and that mail is being sent.",
        f"/domains/{domain}/dns?record=dmarc", domain)])


@dataclass(frozen=True)
class Latest:
    """The newest stored report from one reporter about one domain."""
    domain: str
    reporter: str
    received_at: datetime
    warnings: int


def parse_warnings_prefix(domain: str, reporter: str) -> str:
    # Hashed: a reporter's name is a stranger's free text and the key has 255 characters.
    digest = hashlib.sha256(f"{domain}\0{reporter}".encode()).hexdigest()[:20]
    return f"report_parse_warnings:{digest}:"


def parse_warnings(latest: Latest, open_keys: set[str], keys_today: set[str]) -> Outcome:
    """`open_keys`: open keys of this reporter and domain; `keys_today`: keys raised today."""
    prefix = parse_warnings_prefix(latest.domain, latest.reporter)
    if not latest.warnings:
        return Outcome(cleared=sorted(open_keys))
    k = prefix + latest.received_at.date().isoformat()
    if k in open_keys or k in keys_today:
        return Outcome()
    plural = "warning" if latest.warnings == 1 else "warnings"
    return Outcome(cleared=sorted(open_keys), raised=[EventToRaise(
        "report_parse_warnings", k,
        f"A report from {latest.reporter[:80]} about {latest.domain} was read with "
        f"{latest.warnings} {plural}",
        f"{latest.reporter} sent a report about {latest.domain} that did not follow RFC 9990 in "
        f"{latest.warnings} place(s). It was stored as read: its detail lists the warnings, "
        "which need nothing from you unless its figures look wrong.",
        "/reports", latest.domain)])


def quota_hours_ended(open_keys: list[str], now_epoch: int) -> list[str]:
    """quota_near_cap keys (`quota_near_cap:<hour start, epoch>`) whose hour is over."""
    ended = []
    for k in open_keys:
        hour = k[len(QUOTA_PREFIX):]
        if k.startswith(QUOTA_PREFIX) and hour.isdigit() and int(hour) + HOUR <= now_epoch:
            ended.append(k)
    return ended


def expired(created_at: datetime, now: datetime) -> bool:
    """A policy_changed event is news for NEWS_DAYS, then clears."""
    return now - created_at >= timedelta(days=NEWS_DAYS)


def domain_outcome(domain: str, days: dict[date, SpanTally],
                   policies: list[tuple[date, PublishedPolicy]],
                   last_report_day: date | None, today: date) -> Outcome:
    """Every report-driven rule but parse warnings (those need each reporter's newest report)."""
    return (compliance_drop(domain, days, today)
            .add(policy_change(domain, policies, today))
            .add(no_reports(domain, last_report_day, today)))
