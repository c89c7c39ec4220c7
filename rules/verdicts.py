"""Verdicts on sources and records, with the facts that decided them (pure: plain values in).

A record's classification (docs/sources.md), the first rule that holds:
1. authenticated     DMARC pass: the policy-evaluated DKIM or SPF verdict is pass.
2. likely_forwarded  a forwarding reason (mailing_list, trusted_forwarder, local_policy), or a
                     DKIM signature of the From domain that failed (present, broken in
                     transit), or a pass for some other domain from a known forwarder.
3. suspicious        the source's reputation is suspicious or malicious; or no DKIM signature
                     and no SPF pass aligned with the From domain (SPF counts the `mfrom` scope
                     only, as DMARC does) while the source is not a recognised sending service.
4. needs_review      every other DMARC failure (typically a real service not yet aligned).
explain_record() returns {"rule", "because": [fact codes], "sentence"} for report detail.

A source's classification over its records, the first rule that holds:
1. authorized    for some domain it sends for, an aligned SPF pass (receivers found the IP in
                 the SPF record of a domain aligned with it: only its owner can publish that;
                 the sentence says what the reports show, the DNS check what DNS holds now), or aligned DKIM passes on at
                 least half of that domain's messages while the source is a recognised sending
                 service other than a forwarder, or its confirmed PTR name lies under the
                 domain's organizational domain (the owner's own server holding its key).
2. forwarder     a known forwarder or mailing list; or at least half of its messages are
                 classified likely_forwarded.
3. unauthorized  its reputation is suspicious or malicious; or its identity was checked, it is
                 not a recognised sending service and DMARC failed on every message.
4. unknown       anything else: a recognised service not yet aligned, mixed results, or a
                 source not enriched yet (offline, DNS could not tell), where nothing is invented.
`authorized` is true exactly when the classification is authorized.
"""
from __future__ import annotations

from dataclasses import dataclass

from rules.alignment import dmarc_pass
from store.domain_names import organizational_domain

AUTHENTICATED, LIKELY_FORWARDED = "authenticated", "likely_forwarded"
SUSPICIOUS, NEEDS_REVIEW = "suspicious", "needs_review"
AUTHORIZED, FORWARDER, UNAUTHORIZED, UNKNOWN = "authorized", "forwarder", "unauthorized", "unknown"
SENDER_KINDS = ("unknown", "service", "forwarder")
REPUTATIONS = ("unknown", "clean", "suspicious", "malicious")
BAD_REPUTATIONS = frozenset({"suspicious", "malicious"})
# "forwarded" is the RFC 7489 spelling the parser maps to trusted_forwarder; accept both.
FORWARDING_REASONS = frozenset({"mailing_list", "trusted_forwarder", "local_policy", "forwarded"})


@dataclass(frozen=True)
class Sender:
    """What enrichment knows of a source. kind: unknown, service (a recognised sending
    service) or forwarder; reputation: its abuse_status; checked: the identity look-up got
    answers (FCrDNS pass, fail or none); base_domain: its confirmed PTR's base domain."""
    kind: str = "unknown"
    reputation: str = "unknown"
    name: str | None = None
    checked: bool = False
    base_domain: str | None = None

    def __post_init__(self):
        # A typo is an error, not a silently unknown sender.
        if self.kind not in SENDER_KINDS:
            raise ValueError(f"sender kind {self.kind!r} is not one of {', '.join(SENDER_KINDS)}")
        if self.reputation not in REPUTATIONS:
            raise ValueError(f"reputation {self.reputation!r} is not one of "
                             f"{', '.join(REPUTATIONS)}")


UNKNOWN_SENDER = Sender()


def sender(service_kind: str | None, abuse_status: str | None = "unknown",
           name: str | None = None, fcrdns: str = "unknown",
           base_domain: str | None = None) -> Sender:
    """The one way to build a Sender, from enrichment's values or a Source row's: the service
    map's kind decides (none: not a recognised service); an unreadable reputation is unknown."""
    kind = "service"
    if not service_kind:
        kind = "unknown"
    elif service_kind == "forwarder":
        kind = "forwarder"
    reputation = abuse_status if abuse_status in REPUTATIONS else "unknown"
    return Sender(kind, reputation, name, fcrdns in ("pass", "fail", "none"), base_domain)


# Records

def explain_record(record, alignment: dict, source: Sender = UNKNOWN_SENDER) -> dict:
    """The record's verdict with the facts that decided it and a sentence for people."""
    rule, because = _record_rule(record, alignment or {}, source)
    return {"rule": rule, "because": because, "sentence": _record_sentence(rule, because, source)}


def classify_record(record, alignment: dict, source: Sender = UNKNOWN_SENDER) -> str:
    return _record_rule(record, alignment or {}, source)[0]


def _record_rule(record, alignment: dict, source: Sender) -> tuple[str, list[str]]:
    dkim_verdict = _lower(getattr(record, "dkim", None))
    spf_verdict = _lower(getattr(record, "spf", None))
    if dmarc_pass(dkim_verdict, spf_verdict):
        passed = [f"dmarc_{kind}_pass" for kind, verdict in (("dkim", dkim_verdict),
                                                               ("spf", spf_verdict))
                  if verdict == "pass"]
        return AUTHENTICATED, passed
    dkim = _results(record.auth_dkim, alignment.get("dkim"))
    spf = [(result, aligned) for (result, aligned), entry
           in zip(_results(record.auth_spf, alignment.get("spf")), record.auth_spf or ())
           if _scope(entry) in ("", "mfrom")]
    reasons = sorted({_lower(r.get("Type")) for r in record.reasons or () if isinstance(r, dict)}
                     & FORWARDING_REASONS)
    forwarded = [f"reason_{reason}" for reason in reasons]
    if any(aligned and result == "fail" for result, aligned in dkim):
        forwarded.append("dkim_signature_of_from_domain_failed")
    if source.kind == "forwarder" and any(not aligned and result == "pass"
                                          for result, aligned in dkim + spf):
        forwarded.append("other_domain_passed_from_known_forwarder")
    if forwarded:
        return LIKELY_FORWARDED, forwarded
    if source.reputation in BAD_REPUTATIONS:
        return SUSPICIOUS, [f"reputation_{source.reputation}"]
    signature = any(aligned and result not in ("", "none") for result, aligned in dkim)
    spf_pass = any(aligned and result == "pass" for result, aligned in spf)
    if not signature and not spf_pass and source.kind != "service":
        return SUSPICIOUS, ["no_aligned_dkim_signature", "no_aligned_spf_pass",
                            "not_a_known_sending_service"]
    because = ["dmarc_failed"]
    if signature:
        because.append("aligned_dkim_signature_not_verified")
    if spf_pass:
        because.append("aligned_spf_pass_not_counted")
    if source.kind == "service":
        because.append("known_sending_service")
    return NEEDS_REVIEW, because


RECORD_PHRASES = {
    "dmarc_dkim_pass": "a DKIM signature aligned with the From domain verified",
    "dmarc_spf_pass": "SPF passed for a domain aligned with the From domain",
    "reason_mailing_list": "the receiver recognised a mailing list",
    "reason_trusted_forwarder": "the receiver recognised a trusted forwarder",
    "reason_forwarded": "the receiver recognised forwarding",
    "reason_local_policy": "the receiver applied a local policy",
    "dkim_signature_of_from_domain_failed":
        "a DKIM signature of the From domain was present but failed, as when a forwarder "
        "alters the message",
    "other_domain_passed_from_known_forwarder":
        "another domain's authentication passed from a known forwarder",
    "aligned_dkim_signature_not_verified":
        "a DKIM signature of the From domain is present but could not be verified",
    "aligned_spf_pass_not_counted":
        "the report shows an aligned SPF pass that the receiver's DMARC verdict did not count",
}


def _record_sentence(rule: str, because: list[str], source: Sender) -> str:
    who = source.name or "the source"
    if rule == AUTHENTICATED:
        return "DMARC passed: " + " and ".join(RECORD_PHRASES[b] for b in because) + "."
    if rule == LIKELY_FORWARDED:
        return ("DMARC failed, but probably in forwarding: "
                + "; ".join(RECORD_PHRASES[b] for b in because) + ".")
    if rule == SUSPICIOUS and because[0].startswith("reputation_"):
        return f"DMARC failed and {who} has a {source.reputation} reputation on DNS blocklists."
    if rule == SUSPICIOUS:
        return (f"DMARC failed with nothing tying the message to the From domain: no DKIM "
                f"signature of it, no SPF pass for it, and {who} is not a known sending service.")
    if "known_sending_service" in because:
        return (f"DMARC failed from {who}, a known sending service: it is probably not yet "
                "set up to sign with the domain's DKIM key or to send from an aligned domain.")
    return "DMARC failed: " + "; ".join(RECORD_PHRASES[b] for b in because[1:]) + "."


# Sources

@dataclass(frozen=True)
class DomainResults:
    """A source's messages for one domain: policy-evaluated (aligned) passes and how many
    of its records were classified likely_forwarded."""
    domain: str
    messages: int
    dkim_aligned_pass: int = 0
    spf_aligned_pass: int = 0
    dmarc_pass: int = 0
    forwarded: int = 0


@dataclass(frozen=True)
class SourceVerdict:
    classification: str
    authorized: bool
    because: tuple[str, ...]
    sentence: str


def classify_source(results: list[DomainResults], source: Sender = UNKNOWN_SENDER
                    ) -> SourceVerdict:
    """The source's classification by the rules in this module's docstring."""
    for domain in sorted(results, key=lambda r: (-r.messages, r.domain)):
        if domain.spf_aligned_pass > 0:
            return _verdict(AUTHORIZED, ("aligned_spf_pass",),
                            f"Receivers' reports show this source passing SPF aligned "
                            f"with {domain.domain}.")
        if domain.messages and 2 * domain.dkim_aligned_pass >= domain.messages:
            if source.kind == "service":
                return _verdict(AUTHORIZED, ("aligned_dkim_pass", "known_sending_service"),
                                f"{source.name or 'This sending service'} signs "
                                f"{domain.domain}'s mail with its DKIM key.")
            if source.base_domain and source.base_domain == organizational_domain(domain.domain):
                return _verdict(AUTHORIZED, ("aligned_dkim_pass", "ptr_under_domain"),
                                f"The server is named under {source.base_domain} and signs "
                                f"{domain.domain}'s mail with its DKIM key.")
    messages = sum(r.messages for r in results)
    if source.kind == "forwarder":
        return _verdict(FORWARDER, ("known_forwarder",),
                        f"{source.name or 'This source'} is a known forwarder or mailing list.")
    if messages and 2 * sum(r.forwarded for r in results) >= messages:
        return _verdict(FORWARDER, ("mostly_forwarded",),
                        "Most of its messages carry the marks of forwarding.")
    if source.reputation in BAD_REPUTATIONS:
        return _verdict(UNAUTHORIZED, (f"reputation_{source.reputation}",),
                        f"It has a {source.reputation} reputation on DNS blocklists.")
    if (source.checked and source.kind == "unknown" and messages
            and not any(r.dmarc_pass for r in results)):
        return _verdict(UNAUTHORIZED, ("dmarc_failed_everywhere", "not_a_known_sending_service"),
                        "Every message failed DMARC and it is not a known sending service.")
    if source.kind == "service":
        return _verdict(UNKNOWN, ("known_sending_service", "not_aligned"),
                        f"{source.name or 'A known sending service'} sends without passing "
                        "aligned SPF or DKIM: authorize it or stop it.")
    return _verdict(UNKNOWN, ("not_decided",), "Nothing known yet decides whether it may send.")


def _verdict(classification: str, because: tuple[str, ...], sentence: str) -> SourceVerdict:
    return SourceVerdict(classification, classification == AUTHORIZED, because, sentence)


def _results(results, flags) -> list[tuple[str, bool]]:
    """(result, aligned) pairs; a missing alignment flag counts as not aligned."""
    flags = list(flags or ())
    pairs = []
    for i, entry in enumerate(results or ()):
        result = _lower(entry.get("Result")) if isinstance(entry, dict) else ""
        pairs.append((result, i < len(flags) and bool(flags[i])))
    return pairs


def _scope(entry) -> str:
    """An SPF result's scope (helo or mfrom), "" when the reporter gave none."""
    if not isinstance(entry, dict):
        return ""
    return _lower(entry.get("Scope"))


def _lower(value) -> str:
    return value.strip().lower() if isinstance(value, str) else ""
