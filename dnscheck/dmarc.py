"""DMARC: discovery by the RFC 9989 DNS tree walk, the record's syntax, and what it asks for."""
from __future__ import annotations

import re

from dnscheck import mailto, tagged
from dnscheck.resolver import Lookup
from dnscheck.verdict import ERROR, OK, UNKNOWN, WARNING, Verdict, hosted_cta
from store.domain_names import organizational_domain

KIND = "dmarc"
MAX_QUERIES = 8
POLICIES = ("none", "quarantine", "reject")
_START = re.compile(r"\s*v\s*=\s*dmarc1\b", re.IGNORECASE)
_EXACT_START = re.compile(r"\s*v\s*=\s*DMARC1\s*(;|$)")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_SIZE = re.compile(r"!\d+[kmgt]?\Z", re.IGNORECASE)
_ALLOWED = {"p": POLICIES, "sp": POLICIES, "np": POLICIES, "adkim": ("r", "s"),
            "aspf": ("r", "s"), "t": ("y", "n"), "psd": ("y", "n", "u")}


def walk_targets(domain: str) -> list[str]:
    """Names whose _dmarc record the tree walk asks for, in order: at most 8 (RFC 9989 4.10).

    After the domain itself, a name of eight or more labels is cut to its seven rightmost
    labels, then one label goes at a time, down to the top-level domain."""
    labels = domain.lower().rstrip(".").split(".")
    rest = labels[1:] if len(labels) <= MAX_QUERIES else labels[-(MAX_QUERIES - 1):]
    targets = [".".join(labels)]
    while rest:
        targets.append(".".join(rest))
        rest = rest[1:]
    return targets


def dmarc_records(records) -> list[str]:
    """The TXT records that are meant as DMARC records (others at _dmarc are ignored)."""
    return [r.strip() for r in records if _START.match(r)]


def select(domain: str, found: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The (name, record) whose policy applies, among single records the walk found in order.

    RFC 9989 4.10.1-2: the domain's own record; else the Organizational Domain's (a psd=n
    record, the name below a psd=y one, else the record with the fewest labels); else the PSD's."""
    if not found:
        return None
    if found[0][0] == domain:
        return found[0]
    for name, record in found:
        psd = _tags(record).get("psd", "").lower()
        if psd == "n":
            return name, record
        if psd == "y":
            below = ".".join(domain.split(".")[-(name.count(".") + 2):])
            own = [f for f in found if f[0] == below]
            return own[0] if own else (name, record)
    return found[-1]


def parse(record: str) -> tuple[dict[str, str], list[str]]:
    """Tags of a DMARC record, and one sentence per syntax error, each naming its tag."""
    problems = []
    if not _EXACT_START.match(record):
        problems.append("must start with exactly v=DMARC1; (upper-case, then a semicolon)")
    try:
        tags = tagged.parse(record)
    except ValueError as problem:
        return {}, problems + [f"cannot be read ({problem})"]
    for name, allowed in _ALLOWED.items():
        if name in tags and tags[name].lower() not in allowed:
            problems.append(f"has an invalid {name}= value '{tags[name]}' "
                            f"(allowed: {', '.join(allowed)})")
    if "pct" in tags and not (tags["pct"].isdigit() and 0 <= int(tags["pct"]) <= 100):
        problems.append(f"has an invalid pct= value '{tags['pct']}' (a whole number 0-100)")
    for name in ("rua", "ruf"):
        for uri in _uris(tags.get(name, "")):
            if not _valid_uri(uri):
                problems.append(f"has an invalid {name}= address '{uri}' "
                                "(write mailto:name@host)")
    return tags, problems


def report_uris(value: str) -> list[str]:
    """The URIs of a rua=/ruf= value, without the optional !size suffix."""
    return [_SIZE.sub("", uri) for uri in _uris(value)]


def external_hosts(found_at: str, uris: list[str]) -> list[str]:
    """mailto: hosts outside the record's organizational domain, which must authorize it."""
    own = organizational_domain(found_at)
    hosts = []
    for uri in uris:
        host = mailto.host(uri)
        if host and organizational_domain(host) != own and host not in hosts:
            hosts.append(host)
    return hosts


def authorization_name(found_at: str, host: str) -> str:
    """Where an external report host says it accepts the domain's reports (RFC 7489 7.1)."""
    return f"{found_at}._report._dmarc.{host}"


def verdict(domain: str, found_at: str | None, records: list[str],
            authorized: dict[str, bool | None] | None = None) -> Verdict:
    """From the DMARC record(s) found (at the domain or a parent) to status, sentence and facts.

    `authorized` says, per external report host, whether it publishes the authorization record
    (None when DNS could not tell)."""
    if not records:
        return Verdict(ERROR, f"{domain} publishes no DMARC record, so receivers apply no policy "
                       f"and send no reports: publish a TXT record at _dmarc.{domain} such as "
                       "\"v=DMARC1; p=none; rua=mailto:<your report address>\".",
                       hosted_cta=hosted_cta(domain, KIND, "Publish a DMARC record"),
                       facts={"records": 0})
    where = f"_dmarc.{found_at}"
    inherited = found_at if found_at != domain else None
    if len(records) > 1:
        return Verdict(ERROR, f"{where} serves {len(records)} DMARC records and receivers "
                       "discard them all: keep exactly one.", inherited_from=inherited,
                       hosted_cta=hosted_cta(domain, KIND, "Fix the DMARC record"),
                       facts={"records": len(records), "found_at": found_at})
    record = records[0]
    tags, syntax = parse(record)
    facts = _facts(tags, record, found_at, inherited)
    if syntax:
        return Verdict(ERROR, f"The DMARC record at {where} {syntax[0]}; receivers ignore what "
                       "they cannot read: correct it.", inherited_from=inherited,
                       hosted_cta=hosted_cta(domain, KIND, "Fix the DMARC record"),
                       facts={**facts, "problems": syntax})
    problems = _gaps(domain, where, facts, authorized or {})
    status = problems[0][0] if problems else OK
    if problems:
        details = problems[0][1]
    elif inherited:
        details = (f"{domain} has no DMARC record of its own; the one at {where} covers it "
                   f"with p={facts['policy']} and aggregate reports to {', '.join(facts['rua'])}.")
    else:
        details = (f"DMARC at {where} asks receivers to {facts['policy']} failing mail, with "
                   f"aggregate reports to {', '.join(facts['rua'])}.")
    if len(problems) > 1:
        facts["problems"] = [sentence for _, sentence in problems]
    return Verdict(status, details, inherited_from=inherited,
                   hosted_cta=hosted_cta(domain, KIND, "Fix the DMARC record")
                   if status == ERROR else None, facts=facts)


def unknown(domain: str, name: str, why: str) -> Verdict:
    return Verdict(UNKNOWN, f"DNS could not tell whether _dmarc.{name} publishes a DMARC record "
                   f"({why}); nothing was concluded about {domain}: it is checked again later.")


def check(lookup: Lookup, domain: str) -> Verdict:
    """Walk the tree from the domain up (at most 8 queries), then judge the record that applies."""
    domain = domain.lower().rstrip(".")
    found: list[tuple[str, str]] = []
    for name in walk_targets(domain):
        answer = lookup.txt(f"_dmarc.{name}")
        if answer.unknown:
            return unknown(domain, name, answer.why)
        records = dmarc_records(answer.records)
        if name == domain and len(records) > 1:
            return verdict(domain, domain, records)
        if len(records) == 1:
            found.append((name, records[0]))
            if name == domain or _tags(records[0]).get("psd", "").lower() in ("y", "n"):
                break
    chosen = select(domain, found)
    if chosen is None:
        return verdict(domain, None, [])
    found_at, record = chosen
    tags, _ = parse(record)
    uris = report_uris(tags.get("rua", "")) + report_uris(tags.get("ruf", ""))
    authorized = {host: _authorized(lookup, found_at, host)
                  for host in external_hosts(found_at, uris)}
    return verdict(domain, found_at, [record], authorized)


def _authorized(lookup: Lookup, found_at: str, host: str) -> bool | None:
    answer = lookup.txt(authorization_name(found_at, host))
    if answer.unknown:
        return None
    return bool(dmarc_records(answer.records))


def _facts(tags: dict, record: str, found_at: str, inherited: str | None) -> dict:
    policy = tags.get("p", "").lower() or None
    subdomain_policy = tags.get("sp", "").lower() or None
    pct = tags.get("pct", "100")
    return {
        # For an inherited record, the policy that applies here: the parent's sp=, else its p=.
        "policy": (subdomain_policy or policy) if inherited else policy,
        "subdomain_policy": subdomain_policy,
        "pct": int(pct) if pct.isdigit() else 100,
        "testing": tags.get("t", "n").lower() == "y",
        "rua": report_uris(tags.get("rua", "")),
        "ruf": report_uris(tags.get("ruf", "")),
        "record": record,
        "found_at": found_at,
        "psd": tags.get("psd", "u").lower(),
        "records": 1,
    }


def _gaps(domain, where, facts, authorized) -> list[tuple[str, str]]:
    """(status, sentence) per way the record falls short, most urgent first."""
    gaps = []
    if not facts["policy"] and not facts["rua"]:
        gaps.append((ERROR, f"The DMARC record at {where} has neither p= nor rua=, so receivers "
                     "apply no DMARC at all: add p=none and rua=mailto:<your report address>."))
    elif not facts["policy"]:
        gaps.append((WARNING, f"The DMARC record at {where} has no p= tag, so receivers treat it "
                     "as p=none: add p=quarantine or p=reject once reports show your mail passes."))
    elif facts["policy"] == "none":
        gaps.append((WARNING, f"DMARC for {domain} is p=none, which monitors but does not "
                     "protect: move to p=quarantine, then p=reject, once reports show your own "
                     "mail passes."))
    if facts["pct"] < 100:
        gaps.append((WARNING, f"The DMARC record at {where} applies its policy to only "
                     f"{facts['pct']}% of failing mail (pct={facts['pct']}): raise pct to 100."))
    if facts["testing"]:
        gaps.append((WARNING, f"The DMARC record at {where} has t=y, which asks receivers not to "
                     "apply the policy yet: remove t=y when testing is done."))
    if not facts["rua"]:
        gaps.append((WARNING, f"The DMARC record at {where} has no rua= tag, so no aggregate "
                     "reports are sent: add rua=mailto:<your report address>."))
    for host, ok in authorized.items():
        if ok is False:
            name = authorization_name(facts["found_at"], host)
            gaps.append((WARNING, f"Reports for {facts['found_at']} to {host} will not be sent: "
                         f"{host} publishes no \"v=DMARC1\" TXT record at {name} (RFC 7489 7.1); "
                         "ask its operator to add one, or report to an address at your domain."))
    return sorted(gaps, key=lambda gap: gap[0] != ERROR)


def _tags(record: str) -> dict[str, str]:
    return parse(record)[0]


def _uris(value: str) -> list[str]:
    return [uri.strip() for uri in value.split(",") if uri.strip()]


def _valid_uri(uri: str) -> bool:
    uri = _SIZE.sub("", uri)
    if not _SCHEME.match(uri):
        return False
    if uri.lower().startswith("mailto:"):
        return mailto.host(uri) is not None
    return True

