"""A domain's SMTP TLS figures: its health `tls` object, the tls_failures rule, the TLS-RPT
verdict's arrival sentence. Pure: per-day TlsTally values in, plain values out.

tls_failures (docs/tls-reports.md): judged on the domain's latest day of TLS reports, when that
day is within NEWS_DAYS of today. Raised when its failed sessions pass FAILURE_SHARE percent of
its sessions, or when a result type appears that none of the domain's earlier days had; cleared
when a later day is back under the share with no new result type (or no day is recent).
"""
from __future__ import annotations

from datetime import date, timedelta

from ingest.tls_report import RESULT_TYPES, result_label
from rules.rates import rate
from rules.snapshot_facts import WINDOW_DAYS, TlsTally
from snapshotter.verdicts import percent
from store.event_types import EventToRaise

FAILURE_SHARE = 5.0          # percent of a day's sessions
NEWS_DAYS = 7
TYPE = "tls_failures"


def _failures(tallies) -> dict[str, int]:
    sums: dict[str, int] = {}
    for tally in tallies:
        for kind, count in tally.failures:
            sums[kind] = sums.get(kind, 0) + count
    return sums


def tls_summary(days: dict[date, TlsTally], today: date) -> dict | None:
    """The health `tls` object over the scoring window; None when no TLS report falls in it."""
    first = today - timedelta(days=WINDOW_DAYS - 1)
    window = {day: t for day, t in days.items() if first <= day <= today and t.reports}
    if not window:
        return None
    successful = sum(t.successful for t in window.values())
    failed = sum(t.failed for t in window.values())
    failures = sorted(_failures(window.values()).items(), key=lambda item: (-item[1], item[0]))
    return {"successful_sessions": successful, "failed_sessions": failed,
            "success_rate": rate(successful, successful + failed),
            "failure_types": [{"result_type": kind, "sessions": count}
                              for kind, count in failures],
            "policy_types": sorted({kind for t in window.values() for kind in t.policy_types}),
            "last_report_date": max(window)}


def tls_failures(domain: str, days: dict[date, TlsTally], today: date) -> tuple[list, list]:
    """([EventToRaise], [dedupe key] to clear) of the tls_failures rule for one domain."""
    key = f"{TYPE}:{domain}"
    recent = [day for day, t in days.items() if t.reports and day <= today]
    if not recent or max(recent) < today - timedelta(days=NEWS_DAYS - 1):
        return [], [key]
    last = max(recent)
    tally = days[last]
    seen_before = set(_failures(t for day, t in days.items() if day < last))
    new_types = sorted(kind for kind, count in tally.failures if count and kind not in seen_before)
    share = rate(tally.failed, tally.successful + tally.failed)
    if share <= FAILURE_SHARE and not new_types:
        return [], [key]
    if share <= FAILURE_SHARE:
        worst = new_types[0]
    else:
        ranked = sorted(tally.failures, key=lambda item: (-item[1], item[0]))
        worst = ranked[0][0] if ranked else ""
    return [_event(domain, key, last, tally, share, worst, new_types)], []


def _event(domain, key, day, tally, share, worst, new_types) -> EventToRaise:
    label = result_label(worst) if worst else "unspecified failures"
    if share > FAILURE_SHARE:
        title = (f"TLS delivery to {domain} failed for {percent(share)} of sessions "
                 f"({label})")
    else:
        title = f"New TLS failure for {domain}: {label}"
    fix = RESULT_TYPES[worst][1] if worst in RESULT_TYPES else (
        "see the TLS report's failure details for what the sender met")
    news = (f" First seen that day: {', '.join(new_types)}." if new_types else "")
    detail = (f"On {day.isoformat()} senders' TLS reports counted {tally.failed} failed of "
              f"{tally.successful + tally.failed} sessions to {domain}'s MX hosts, most "
              f"{worst or 'without a result type'}.{news} To fix: {fix}.")
    return EventToRaise(TYPE, key, title, detail, f"/domains/{domain}/health", domain)


def with_arrivals(entry: dict, days: dict[date, TlsTally], today: date) -> dict:
    """The tls_rpt DNS entry, its details saying whether TLS reports arrive for the domain."""
    arrived = [day for day, t in days.items() if t.reports and day <= today]
    if arrived:
        sentence = f"TLS reports are arriving: the latest covers {max(arrived).isoformat()}."
    elif entry.get("status") == "ok":
        sentence = "No TLS report has arrived yet."
    else:
        return entry
    details = entry.get("details") or ""
    return {**entry, "details": f"{details} {sentence}".strip()}
