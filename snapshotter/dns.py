"""The `dns` object of domain health, its score and the action items its gaps call for."""
from __future__ import annotations

from rules.rates import rate
from rules.snapshot_facts import ActionItem

KINDS = ("dmarc", "spf", "dkim", "mta_sts", "tls_rpt", "bimi", "dane")
STATUSES = ("ok", "warning", "error", "unknown")
LABELS = {"dmarc": "DMARC", "spf": "SPF", "dkim": "DKIM", "mta_sts": "MTA-STS",
          "tls_rpt": "TLS-RPT", "bimi": "BIMI", "dane": "DANE (TLSA)"}
SCORE_POINTS = {"dmarc": 40, "spf": 30, "dkim": 30}
STATUS_SHARE = {"ok": 1.0, "warning": 0.5, "error": 0.0}
# Kinds whose gaps become action items (the contract's dns_* item types).
ITEM_KINDS = ("dmarc", "spf", "dkim", "mta_sts", "bimi")
GAP_SEVERITY = {("dmarc", "error"): "high", ("spf", "error"): "high", ("dkim", "error"): "high"}


def unchecked(domain: str, kind: str) -> dict:
    return {"status": "unknown",
            "details": f"The {LABELS[kind]} record of {domain} has not been checked yet."}


def dns_view(domain: str, dns: dict | None) -> dict:
    """One entry per kind; a kind never checked (or unreadable) is `unknown`, never invented."""
    view = {}
    for kind in KINDS:
        entry = (dns or {}).get(kind)
        if not isinstance(entry, dict) or entry.get("status") not in STATUSES:
            view[kind] = unchecked(domain, kind)
            continue
        shown = {"status": entry["status"], "details": str(entry.get("details") or "")}
        for optional in ("inherited_from", "hosted_cta"):
            if optional in entry:
                shown[optional] = entry[optional]
        view[kind] = shown
    return view


def dns_score(view: dict) -> float | None:
    """dmarc 40, spf 30, dkim 30 points: ok full, warning half, error none; unknown left out."""
    earned = possible = 0.0
    for kind, points in SCORE_POINTS.items():
        share = STATUS_SHARE.get(view[kind]["status"])
        if share is not None:
            earned += points * share
            possible += points
    if not possible:
        return None         # nothing scored is checked: no score, rather than 0
    return rate(earned, possible)


def all_checked(view: dict) -> bool:
    return all(view[kind]["status"] != "unknown" for kind in SCORE_POINTS)


def dns_items(domain: str, view: dict, dns: dict | None = None) -> list[ActionItem]:
    """An action item per record that is missing, malformed or not doing its job; an optional
    record that is absent (marked so in the stored check, `dns`) is a low one."""
    items = []
    for kind in ITEM_KINDS:
        status = view[kind]["status"]
        if status not in ("warning", "error"):
            continue
        severity = GAP_SEVERITY.get((kind, status), "medium" if status == "error" else "low")
        if kind not in SCORE_POINTS and _absent((dns or {}).get(kind)):
            severity = "low"
        verb = "is missing or malformed" if status == "error" else "needs attention"
        action = view[kind]["details"] or f"Review the {LABELS[kind]} record."
        title = f"{LABELS[kind]} record of {domain} {verb}"
        items.append(ActionItem(type=f"dns_{kind}", severity=severity, title=title,
                                suggested_action=action))
    return items


def _absent(entry) -> bool:
    return isinstance(entry, dict) and entry.get("absent") is True


# Events the live check raises about one record kind (dnscheck/conditions.py): the kind is the
# last part of the dedupe key, or fixed by the type.
RECORD_EVENTS = {"dns_record_missing": None, "dns_record_invalid": None,
                 "spf_lookup_limit": "spf", "weak_dkim_key": "dkim"}


def event_kind(type_: str, dedupe_key: str) -> str:
    """The record kind a DNS event is about ("" for any other event)."""
    if type_ not in RECORD_EVENTS:
        return ""
    kind = RECORD_EVENTS[type_] or dedupe_key.rpartition(":")[2]
    return kind if kind in KINDS else ""


def without_repeats(gaps: list[ActionItem], events: list[ActionItem]) -> list[ActionItem]:
    """Event items a DNS gap item already says (the contract shows those as `dns_*` only)."""
    shown = {item.type for item in gaps}
    return [e for e in events if not (e.record_kind and f"dns_{e.record_kind}" in shown)]


def any_error(view: dict) -> bool:
    return any(entry["status"] == "error" for entry in view.values())


def record_parent(dns: dict | None) -> str:
    """The parent domain the live check found the DMARC record on ("" for the domain's own)."""
    entry = (dns or {}).get("dmarc")
    parent = entry.get("inherited_from") if isinstance(entry, dict) else None
    return parent if isinstance(parent, str) else ""


def published_policy(dns: dict | None) -> str | None:
    """The p= of the DMARC record found by the live check, when it recorded one."""
    entry = (dns or {}).get("dmarc")
    policy = entry.get("policy") if isinstance(entry, dict) else None
    return policy if policy in ("none", "quarantine", "reject") else None
