"""What a report's mail proves about where it came from (its DKIM signatures, as DMARC judges
a message), and the rules that use it: pure functions over plain values."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from store.domain_names import organizational_domain

VERIFIED, OTHER_SIGNER, FAILED, UNSIGNED, UNCHECKED = (
    "verified", "other_signer", "failed", "unsigned", "unchecked")
# Every value, with what it means (the API's /enums, OpenAPI and the docs say the same).
AUTHENTICITIES = {
    VERIFIED: "a valid DKIM signature whose d= shares the organizational domain of the mail's From",
    OTHER_SIGNER: "a valid DKIM signature, but of a domain not aligned with From (a forwarder or "
                  "relay)",
    FAILED: "a DKIM signature that does not verify: body or signed headers altered, or a bad "
            "signature",
    UNSIGNED: "mail with no DKIM signature",
    UNCHECKED: "not checked: not from mail, offline, DNS not answering, the key no longer "
               "published or the signature expired (authenticity_reason says which)",
}
# A signature's outcome: it verifies, it does not, or it could not be checked.
PASS, FAIL, UNKNOWN = "pass", "fail", "unknown"
# RUA_REQUIRE_DKIM_FROM applies to mail whose Date is this close to its arrival.
FRESH = timedelta(days=7)


@dataclass(frozen=True)
class Signature:
    """One DKIM-Signature's outcome; why says what failed or kept it from being checked."""
    domain: str
    outcome: str
    why: str = ""


@dataclass(frozen=True)
class Provenance:
    """What a report's mail proves: its authenticity, the signing domain, and why unchecked
    (or failed); from_domain and sent_at (the mail's From and Date) serve the rules below."""
    authenticity: str = UNCHECKED
    signed_by: str = ""
    reason: str = "not from mail"
    from_domain: str = ""
    sent_at: datetime | None = None


NOT_FROM_MAIL = Provenance()
NOT_VERIFIED = Provenance(reason="its mail's signatures were not checked")


def verdict(signatures: list[Signature], from_domain: str, sent_at: datetime | None = None,
            unchecked: str = "") -> Provenance:
    """The message's authenticity from its signatures' outcomes: a valid aligned signature
    first, then any valid one, then one not checked (it may have been the good one), then a
    failed one. unchecked: why no signature was tried at all (offline), if so."""
    def proven(authenticity, signed_by="", reason=""):
        return Provenance(authenticity, signed_by, reason, from_domain, sent_at)
    if unchecked and signatures:
        return proven(UNCHECKED, signatures[0].domain, unchecked)
    valid = [s for s in signatures if s.outcome == PASS]
    for signature in valid:
        if same_organization(signature.domain, from_domain):
            return proven(VERIFIED, signature.domain)
    if valid:
        return proven(OTHER_SIGNER, valid[0].domain)
    for signature in signatures:
        if signature.outcome == UNKNOWN:
            return proven(UNCHECKED, signature.domain, signature.why)
    if signatures:
        return proven(FAILED, signatures[0].domain, signatures[0].why)
    return proven(UNSIGNED)


def same_organization(domain: str, other: str) -> bool:
    """Whether two domains share their organizational domain (the PSL's, as DMARC aligns)."""
    first, second = _name(domain), _name(other)
    if not first or not second:
        return False
    return first == second or organizational_domain(first) == organizational_domain(second)


def speaks_for_reporter(authenticity: str, signed_by: str, email: str) -> bool:
    """A report speaks for its reporter when its mail is verified and signed by the
    organizational domain of the report's contact e-mail (Google's and Microsoft's are)."""
    return authenticity == VERIFIED and same_organization(signed_by, email.rpartition("@")[2])


def unauthenticated(required: tuple[str, ...], provenance: Provenance, email: str,
                    org_name: str, now: datetime) -> str | None:
    """Why RUA_REQUIRE_DKIM_FROM refuses a report, or None. A report claims a listed domain
    when its mail's From, its contact e-mail or its org_name has it as organizational domain;
    its fresh mail (Date within 7 days of now, or none) must then be verified and signed by
    that domain. Unchecked mail is never refused."""
    if not required or provenance.authenticity == UNCHECKED:
        return None
    sent = provenance.sent_at
    if sent is not None and abs(now - sent) > FRESH:
        return None
    claimed = claimed_domain(required, (provenance.from_domain,
                                        email.rpartition("@")[2], org_name))
    if claimed is None:
        return None
    if provenance.authenticity == VERIFIED and same_organization(provenance.signed_by, claimed):
        return None
    signer = f", signed by {provenance.signed_by}" if provenance.signed_by else ""
    return (f"unauthenticated: the report claims {claimed} (RUA_REQUIRE_DKIM_FROM) but its "
            f"mail is {provenance.authenticity}{signer}, not signed by {claimed}")


def required_domains(setting: str) -> tuple[str, ...]:
    """RUA_REQUIRE_DKIM_FROM's domains (comma-separated), lower-case."""
    return tuple(_name(domain) for domain in setting.split(",") if _name(domain))


def claimed_domain(required: tuple[str, ...], names: tuple[str, ...]) -> str | None:
    """The first listed domain one of names has as its organizational domain, or None."""
    organizations = {_organization(name) for name in names} - {""}
    for domain in required:
        if _organization(domain) in organizations:
            return domain
    return None


def _organization(name: str) -> str:
    name = _name(name)
    if "." not in name or " " in name:
        return ""
    return organizational_domain(name)


def _name(domain: str) -> str:
    return (domain or "").strip().rstrip(".").lower()
