"""Which events a domain's check raises and which it clears: pure, from the previous and new check.

Rules (docs/alerts.md; severities as /enums lists them):
- `dns_record_missing` / `dns_record_invalid`: a kind whose status is `error`, by whether its
  record was found; cleared once the kind is `ok` or `warning`. An optional kind (MTA-STS,
  TLS-RPT, BIMI, DANE) that is absent raises none: its low action item says so.
- `spf_lookup_limit`: SPF needs more than 10 DNS lookups; cleared when it needs 10 or fewer.
- `weak_dkim_key`: an RSA key under 2048 bits among the selectors found; cleared when none is.
- `verification_lost`: `dmarc_state` leaves verified/verified_inherited for a definite other
  state (not `unconfirmed`, which is not a negative, even across checks that could not tell);
  cleared when verified again.
- `policy_changed`: the published p= differs from the last one DNS told; a newer change
  replaces the open event (one key per domain, shared with the reports' policy_changed).
A kind DNS could not tell (`unknown`) neither raises nor clears anything.
"""
from __future__ import annotations

from dataclasses import dataclass

from dnscheck.check import KINDS, DomainCheck
from dnscheck.verdict import ABSENT
from store.event_types import EventToRaise, Outcome

LABELS = {"dmarc": "DMARC", "spf": "SPF", "dkim": "DKIM", "mta_sts": "MTA-STS",
          "tls_rpt": "TLS-RPT", "bimi": "BIMI", "dane": "DANE (TLSA)"}
VERIFIED = ("verified", "verified_inherited")
SPF_LIMIT = 10
LAST_POLICY = "last_known_policy"     # kept on a DMARC entry DNS could not tell about
STRONG_RSA_BITS = 2048


@dataclass(frozen=True)
class Previous:
    """What the store knew before this check: whether the domain was verified at its last
    definite answer, and the last p= DNS published (checks that could not tell leave both)."""
    verified: bool = False
    policy: str | None = None

    @classmethod
    def of(cls, dns: dict | None, dmarc_state: str, verified_at) -> "Previous":
        verified = dmarc_state in VERIFIED or (dmarc_state == "unconfirmed"
                                               and verified_at is not None)
        entry = (dns or {}).get("dmarc")
        kept = entry.get(LAST_POLICY) if isinstance(entry, dict) else None
        return cls(verified, policy(dns) or kept)


def key(type_: str, domain: str, part: str = "") -> str:
    return f"{type_}:{domain}:{part}" if part else f"{type_}:{domain}"


def evaluate(previous: Previous, check: DomainCheck, report_address: str) -> Outcome:
    raised, cleared = [], []
    for rule in (_records, _spf_limit, _weak_dkim, _verification):
        up, down = rule(previous, check, report_address)
        raised += up
        cleared += down
    change = _policy_change(previous, check)
    if change is not None:
        # A newer change: the open event of the key closes so the key is raised anew.
        raised.append(change)
        cleared.append(change.key)
    return Outcome(raised, cleared)


def _records(previous, check, _address):
    raised, cleared = [], []
    d = check.domain
    for kind in KINDS:
        entry = check.dns[kind]
        if entry["status"] == "unknown":
            continue
        missing, invalid = key("dns_record_missing", d, kind), key("dns_record_invalid", d, kind)
        if entry["status"] != "error" or entry.get(ABSENT):
            cleared += [missing, invalid]
            continue
        link = (entry.get("hosted_cta") or {}).get("url")
        if _found(kind, entry):
            raised.append(EventToRaise("dns_record_invalid", invalid,
                                    f"The {LABELS[kind]} record of {d} is invalid",
                                    entry["details"], link, d))
            cleared.append(missing)
        else:
            raised.append(EventToRaise("dns_record_missing", missing,
                                    f"The {LABELS[kind]} record of {d} is missing",
                                    entry["details"], link, d))
            cleared.append(invalid)
    return raised, cleared


def _found(kind: str, entry: dict) -> bool:
    """Whether an `error` verdict is about a record that exists (invalid) or none (missing)."""
    if kind == "dkim":
        return bool(entry.get("keys"))
    if kind in ("dmarc", "spf"):
        return bool(entry.get("record")) or bool(entry.get("records"))
    return True        # an optional kind's absence raises nothing; its error is a bad record


def _spf_limit(_previous, check, _address):
    entry, k = check.dns["spf"], key("spf_lookup_limit", check.domain)
    lookups = entry.get("lookups")
    if entry["status"] == "unknown" or not isinstance(lookups, int):
        return [], []
    if lookups <= SPF_LIMIT:
        return [], [k]
    return [EventToRaise("spf_lookup_limit", k,
                      f"SPF of {check.domain} needs {lookups} DNS lookups, over the limit of 10",
                      entry["details"], (entry.get("hosted_cta") or {}).get("url"),
                      check.domain)], []


def _weak_dkim(_previous, check, _address):
    entry, k = check.dns["dkim"], key("weak_dkim_key", check.domain)
    if entry["status"] == "unknown":
        return [], []
    weak = [f"{found.get('selector')} ({found.get('bits')} bits)"
            for found in entry.get("keys") or []
            if found.get("type") == "rsa" and isinstance(found.get("bits"), int)
            and found["bits"] < STRONG_RSA_BITS]
    if not weak:
        return [], [k]
    detail = (f"RSA keys under {STRONG_RSA_BITS} bits can be factored by a determined attacker: "
              f"publish a {STRONG_RSA_BITS}-bit key and rotate to it. Weak: {', '.join(weak)}.")
    return [EventToRaise("weak_dkim_key", k, f"Weak DKIM key for {check.domain}", detail,
                      domain=check.domain)], []


def _verification(previous, check, address):
    k, state = key("verification_lost", check.domain), check.states["dmarc_state"]
    if state in VERIFIED:
        return [], [k]
    if not previous.verified or state in ("unconfirmed", "pending"):
        return [], []
    to = f" to {address}" if address else ""
    detail = (f"The DMARC record of {check.domain} no longer sends aggregate reports{to} "
              f"(now {state.replace('_', ' ')}). {check.dns['dmarc']['details']}")
    return [EventToRaise("verification_lost", k,
                      f"{check.domain} is no longer verified", detail,
                      f"/domains/{check.domain}/dns?record=dmarc", check.domain)], []


def _policy_change(previous: Previous, check: DomainCheck) -> EventToRaise | None:
    before, after = previous.policy, policy(check.dns)
    if before is None or after is None or before == after:
        return None
    return EventToRaise("policy_changed", key("policy_changed", check.domain),
                     f"DMARC policy of {check.domain} changed from p={before} to p={after}",
                     f"The DMARC record published for {check.domain} now says p={after} "
                     f"(it said p={before} when last seen).", domain=check.domain)


def policy(dns: dict | None) -> str | None:
    """The p= of a stored check's DMARC entry, when DNS told."""
    entry = (dns or {}).get("dmarc")
    if not isinstance(entry, dict) or entry.get("status") == "unknown":
        return None
    found = entry.get("policy")
    return found if found in ("none", "quarantine", "reject") else None
