"""Domain health: the compliance score blended with DNS, plus what to do about it."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rules.grades import grade, health_state, policy_name, whole
from rules.rates import rate
from rules.scores import WindowScores, Scored
from rules.snapshot_facts import SEVERITY_RANK, WINDOW_DAYS, ActionItem, TopSender
from shapes.bodies import ComplianceFiguresBody, DomainHealthBody
from snapshotter import dns, tls
from snapshotter.trends import last_day, sparkline
from snapshotter.verdicts import domain_verdict, percent

TOP_SENDERS = 10
ACTION_ITEMS_SHOWN = 5


@dataclass(frozen=True)
class Assessment:
    """One domain's figures, shared by its health body and its overview card."""
    name: str
    compliance: Scored
    dns: dict
    score: float | None          # the health score: 0.8 compliance + 0.2 DNS (when DNS is known)
    items: list[ActionItem]      # every open item, most urgent first
    verdict: str

    @property
    def grade(self) -> str:
        return grade(self.score)


def health_score(compliance_score: float | None, dns_score: float | None) -> float | None:
    """0.8 compliance score + 0.2 DNS score; the compliance score alone while DNS is unknown."""
    if compliance_score is None or dns_score is None:
        return compliance_score
    return round(0.8 * compliance_score + 0.2 * dns_score, 2)


def sorted_items(items: list[ActionItem]) -> list[ActionItem]:
    return sorted(items, key=lambda item: SEVERITY_RANK.get(item.severity, 3))


def assess(window_scores: WindowScores, name: str) -> Assessment:
    d = window_scores.facts.domains[name]
    compliance = window_scores.domain(name)
    view = dns.dns_view(name, d.dns)
    view["tls_rpt"] = tls.with_arrivals(view["tls_rpt"], d.tls_days, window_scores.facts.today)
    gaps = dns.dns_items(name, view, d.dns)
    items = sorted_items(gaps + dns.without_repeats(gaps, d.items))
    if compliance.score is None and compliance.last_report is not None:
        # Reports once, none in the window: the score is near nothing for that reason alone.
        items.sort(key=lambda item: item.type != "no_reports")
    return Assessment(name, compliance, view, health_score(compliance.score, dns.dns_score(view)),
                      items, domain_verdict(name, compliance, window_scores.facts.report_address))


def item_body(item: ActionItem) -> dict:
    body = {"type": item.type, "severity": item.severity, "title": item.title,
            "suggested_action": item.suggested_action}
    if item.cta_url:
        body["cta_url"] = item.cta_url
        body["cta_label"] = item.cta_label or "Open"
    return body


def sender_body(sender: TopSender) -> dict:
    body = {"ip": sender.ip, "count": sender.messages,
            "spf_result": "pass" if 2 * sender.spf_aligned_pass >= sender.messages else "fail",
            "dkim_result": "pass" if 2 * sender.dkim_aligned_pass >= sender.messages else "fail"}
    for name in ("service_name", "service_icon", "service_slug"):
        if getattr(sender, name):        # only for a recognised sender, only what is known
            body[name] = getattr(sender, name)
    return body


def empty_state(a: Assessment) -> dict:
    """Shown when there is nothing to do; healthy only when every check is in and good."""
    if a.compliance.score is None:
        return {"healthy": False, "message": "No open action items. " + a.verdict}
    if not dns.all_checked(a.dns):
        return {"healthy": False,
                "message": f"No open action items, but the DNS records of {a.name} have not been "
                           "checked yet, so its health is not confirmed."}
    if dns.any_error(a.dns):
        return {"healthy": False,
                "message": f"No open action items, but a DNS record of {a.name} is missing or "
                           "malformed: see its dns entries."}
    if health_state(a.score) != "secure" or not a.compliance.tally.messages:
        return {"healthy": False, "message": "No open action items. " + a.verdict}
    return {"healthy": True,
            "message": f"Nothing needs doing for {a.name}: its DNS records check out and "
                       f"{percent(a.compliance.compliance_rate)} of mail passes DMARC."}


def verified_rate(verified: int, messages: int) -> float | None:
    """The share (percent) of the window's messages that reports in verified mail account for
    (rules/authenticity.py): how much of the figures rests on reports proven to come from their
    reporter; None before any message."""
    if not messages:
        return None
    return rate(min(verified, messages), messages)


def compliance_policy(a: Assessment, published: str | None) -> str:
    """The reported policy; before any report, the one published in DNS when known, else none."""
    if a.compliance.policy is None:
        return published or "none"
    return policy_name(a.compliance.policy)


def health_doc(window_scores: WindowScores, name: str, computed_at: datetime,
               assessment: Assessment | None = None) -> DomainHealthBody:
    """The /domains/{domain}/health body (from the domain's assessment when already made)."""
    d = window_scores.facts.domains[name]
    a = assessment or assess(window_scores, name)
    c = a.compliance
    compliance = ComplianceFiguresBody(rate=c.compliance_rate, spf_pass=c.spf_rate,
                                   dkim_pass=c.dkim_rate,
                                   policy=compliance_policy(a, dns.published_policy(d.dns)))
    doc = DomainHealthBody(
        domain=name, overall_score=whole(a.score), grade=a.grade, verdict=a.verdict,
        last_report_date=d.last_report_day, total_messages=c.tally.messages, dns=a.dns,
        compliance=compliance,
        verified_rate=verified_rate(d.verified_messages, c.tally.messages),
        tls=tls.tls_summary(d.tls_days, window_scores.facts.today),
        top_senders=[sender_body(s) for s in d.senders[:TOP_SENDERS]],
        alert_count=len(a.items),
        action_items=[item_body(i) for i in a.items[:ACTION_ITEMS_SHOWN]],
        trend_sparkline=sparkline(d.days, last_day(window_scores.facts.today, d.days), WINDOW_DAYS),
    )
    if not a.items:
        doc["empty_state"] = empty_state(a)
    doc["computed_at"] = computed_at
    return doc

