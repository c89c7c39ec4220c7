"""BIMI: the `default._bimi` TXT record's logo, and the DMARC enforcement it depends on."""
from __future__ import annotations

from urllib.parse import urlsplit

from dnscheck import tagged
from dnscheck.resolver import Answer
from dnscheck.verdict import ERROR, OK, UNKNOWN, WARNING, Verdict, hosted_cta

KIND = "bimi"
ENFORCING = ("quarantine", "reject")


def logo_and_authority(record: str) -> tuple[str, str | None]:
    """(l=, a= or None) of a `v=BIMI1` record; ValueError says what is wrong."""
    tags = tagged.parse(record)
    logo, authority = tags.get("l", ""), tags.get("a") or None
    if "l" not in tags:
        raise ValueError("it has no l= logo URL")
    if logo and not _https(logo):
        raise ValueError(f"l={logo} is not an https: URL")
    if logo and not urlsplit(logo).path.lower().endswith(".svg"):
        raise ValueError(f"l={logo} does not point at an .svg file")
    if authority and not _https(authority):
        raise ValueError(f"a={authority} is not an https: URL")
    return logo, authority


def _https(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme.lower() == "https" and bool(parts.hostname)


def enforcement_gap(dmarc: Verdict) -> str | None:
    """Why DMARC is not at enforcement ('' when it is); None when its policy is not known."""
    policy = dmarc.facts.get("policy")
    if policy is None:
        return None if dmarc.status == UNKNOWN else "DMARC publishes no policy"
    pct = dmarc.facts.get("pct", 100)
    if policy not in ENFORCING:
        return f"DMARC is at p={policy}"
    if pct != 100:
        return f"DMARC applies p={policy} to {pct}% of mail only"
    if dmarc.facts.get("testing"):
        return "DMARC is in testing mode (t=y)"
    if dmarc.facts.get("subdomain_policy") == "none":
        return "DMARC leaves subdomains at sp=none"
    return ""


def verdict(domain: str, txt: Answer, dmarc: Verdict) -> Verdict:
    """The record first, then whether DMARC lets mailbox providers show the logo at all."""
    name = f"default._bimi.{domain}"
    cta = hosted_cta(domain, KIND, "Set up BIMI")
    early, record = tagged.presence(
        txt, "BIMI1", name=name, label="BIMI", cta=cta,
        benefit="with one (and DMARC at enforcement), mailbox providers that support BIMI "
                "show your logo beside your messages.")
    if early:
        return early
    try:
        logo, authority = logo_and_authority(record)
    except ValueError as problem:
        return Verdict(ERROR, f"The BIMI record at {name} is malformed ({problem}): it must read "
                              "v=BIMI1; l=https://<host>/<logo>.svg.", hosted_cta=cta)
    facts = {"logo": logo, "authority": authority}
    if not logo:
        return Verdict(WARNING, f"The BIMI record at {name} has an empty l=, which declines BIMI: "
                                "no logo is shown until it names an https SVG logo.", facts=facts)
    return _enforcement_verdict(domain, dmarc, facts)


def _enforcement_verdict(domain: str, dmarc: Verdict, facts: dict) -> Verdict:
    gap = enforcement_gap(dmarc)
    if gap is None:
        return Verdict(UNKNOWN, f"The BIMI record of {domain} is valid, but its DMARC policy "
                                "could not be read, and the logo shows only at enforcement.",
                       facts=facts)
    if gap:
        return Verdict(WARNING, f"The BIMI record of {domain} is valid, but {gap}: mailbox "
                                "providers show the logo only at p=quarantine or p=reject "
                                "applied to all mail.", facts=facts)
    return Verdict(OK, f"BIMI names the logo {facts['logo']} and DMARC is at enforcement, so "
                       "supporting mailbox providers can show it.", facts=facts)


def check(lookup, domain: str, dmarc: Verdict) -> Verdict:
    return verdict(domain, lookup.txt(f"default._bimi.{domain}"), dmarc)
