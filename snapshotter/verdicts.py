"""Verdict sentences: what the figures mean and what to do next, written for people."""
from __future__ import annotations

from rules.scores import Scored
from rules.snapshot_facts import WINDOW_DAYS, PublishedPolicy

ALIGNED_ENOUGH = 90.0


def percent(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


def _rua(address: str) -> str:
    return f"rua=mailto:{address}" if address else "a rua= address that delivers here"


def no_reports_yet(subject: str, address: str) -> str:
    return (f"No DMARC reports for {subject} yet. Publish a DMARC record with {_rua(address)} "
            "and reports will start to arrive within a day or two.")


def domain_verdict(domain: str, s: Scored, address: str = "") -> str:
    """One sentence for a domain, from the first condition that holds, most basic first."""
    if s.last_report is None:
        return no_reports_yet(domain, address)
    if s.score is None:
        return (f"No reports for {domain} in the last {WINDOW_DAYS} days (the last covers "
                f"{s.last_report.isoformat()}), so it is not scored. Check that its DMARC record "
                "still asks for reports (rua=) and that mail is being sent.")
    passing = percent(s.compliance_rate)
    if s.compliance_rate < ALIGNED_ENOUGH:
        return (f"Only {passing} of mail from {domain} passes DMARC. Align the failing senders "
                "shown under top senders before tightening the policy.")
    return _policy_step(domain, passing, s.policy or PublishedPolicy(), s)


def _policy_step(domain: str, passing: str, policy: PublishedPolicy, s: Scored) -> str:
    if policy.testing == "y":
        return (f"{passing} of mail from {domain} passes DMARC, but the policy is in testing mode "
                "(t=y). Remove t=y so receivers apply it.")
    if policy.p not in ("quarantine", "reject"):
        return (f"{passing} of mail from {domain} passes DMARC, but the policy only monitors "
                "(p=none). Move to p=quarantine to stop spoofed mail.")
    if policy.pct is not None and policy.pct < 100:
        return (f"{passing} of mail from {domain} passes DMARC under p={policy.p} at pct="
                f"{policy.pct}. Raise pct to 100 so the policy covers all mail.")
    if policy.p == "quarantine":
        return (f"{passing} of mail from {domain} passes DMARC under p=quarantine. Move to "
                "p=reject once the remaining failures are understood.")
    weakest, value = min((("SPF", s.spf_rate), ("DKIM", s.dkim_rate)), key=lambda kv: kv[1])
    if value < ALIGNED_ENOUGH:
        return (f"{domain} enforces p=reject, but only {percent(value)} of its mail has an "
                f"aligned {weakest} pass. Align {weakest} for your senders so one failure "
                "cannot bounce mail.")
    return (f"{domain} is well protected: {passing} of mail passes DMARC under p=reject. "
            "Keep an eye on new senders.")


def org_verdict(s: Scored, domain_count: int, needing: int, worst: str | None,
                address: str = "") -> str:
    """One sentence for the organization."""
    if s.last_report is None:
        return no_reports_yet("your domains", address)
    if s.score is None:
        return (f"No reports in the last {WINDOW_DAYS} days (the last covers "
                f"{s.last_report.isoformat()}), so nothing is scored. Check that your domains' "
                "DMARC records still ask for reports (rua=).")
    passing = percent(s.compliance_rate)
    if needing and worst:
        plural = "domain needs" if needing == 1 else "domains need"
        return (f"{needing} of {domain_count} {plural} attention ({passing} of mail passes DMARC). "
                f"Start with {worst}, the lowest score.")
    subject = "Your domain is" if domain_count == 1 else f"All {domain_count} domains are"
    return (f"{subject} in good shape: {passing} of mail passes DMARC. "
            "Keep an eye on new senders.")
