"""The organization overview: org_health, domain cards worst first, action item counts."""
from __future__ import annotations

from rules.grades import health_state, policy_name, whole
from rules.scores import WindowScores
from rules.snapshot_facts import ActionItem
from shapes.bodies import (
    ActionItemsSummaryBody,
    DomainCardBody,
    OrgHealthBody,
    OverviewBody,
)
from snapshotter.dns import published_policy
from snapshotter.health import Assessment, assess
from snapshotter.verdicts import org_verdict


def needs_attention(a: Assessment) -> bool:
    """Below the healthy band (with data) or holding at least one open item."""
    return bool(a.items) or (a.score is not None and health_state(a.score) != "secure")


def card(a: Assessment, inherited_from: str, published: str | None = None) -> DomainCardBody:
    policy = a.compliance.policy
    # An unreadable reported policy is shown as "", a domain without reports as the one its
    # DMARC record publishes (the live check), else none.
    if policy is None:
        shown = published or "none"
    elif policy_name(policy) == policy.p:
        shown = policy.p
    else:
        shown = ""
    top = a.items[0] if a.items else None
    body = DomainCardBody(domain=a.name, score=whole(a.score), grade=a.grade, verdict=a.verdict,
                      compliance_rate=a.compliance.compliance_rate,
                      total_messages=a.compliance.tally.messages,
                      policy=shown, top_issue=top.title if top else "",
                      top_issue_severity=top.severity if top else "",
                      action_count=len(a.items), forwarded_messages=a.compliance.tally.forwarded)
    if inherited_from:
        body.update(inherited=True, inherited_from=inherited_from)
    return body


def card_order(a: Assessment):
    """Worst score first; domains without any report after those with scores."""
    return (a.score is None, a.score or 0.0, a.name)


def summary(items: list[ActionItem]) -> ActionItemsSummaryBody:
    counts = {"high": 0, "medium": 0, "low": 0}
    for item in items:
        counts[item.severity] = counts.get(item.severity, 0) + 1
    return ActionItemsSummaryBody(total_pending=counts["high"] + counts["medium"] + counts["low"],
                              **counts)


def overview_doc(window_scores: WindowScores, assessments: list[Assessment] | None = None) -> OverviewBody:
    """The /dashboard/overview body (figures of the scoring window; has_data is all-time)."""
    facts = window_scores.facts
    assessments = sorted(assessments if assessments is not None
                         else [assess(window_scores, n) for n in facts.domains], key=card_order)
    org = window_scores.org()
    needing = [a for a in assessments if needs_attention(a)]
    worst = needing[0].name if needing else None
    org_health = OrgHealthBody(
        overall_score=whole(org.score), grade=org.grade,
        verdict=org_verdict(org, len(assessments), len(needing), worst, facts.report_address),
        health_state=health_state(org.score), compliance_rate=org.compliance_rate,
        # Every domain with a card, scored or not, so the count and the cards agree.
        total_messages=org.tally.messages, total_domains=len(assessments),
        domains_needing_attention=len(needing), unique_source_ips=facts.unique_ips,
        has_data=facts.has_data, forwarded_messages=org.tally.forwarded,
        # An archive older than the window scores N/A: this says where its data ends.
        latest_data_date=org.last_report,
    )
    items = list(facts.org_items) + [i for a in assessments for i in a.items]
    cards = [card(a, facts.domains[a.name].inherited_from,
                  published_policy(facts.domains[a.name].dns))
             for a in assessments]
    return OverviewBody(org_health=org_health, domain_cards=cards,
                    action_items_summary=summary(items))
