"""TLS-RPT (RFC 8460): the `_smtp._tls` TXT record and where it asks TLS reports to go."""
from __future__ import annotations

from urllib.parse import urlsplit

from dnscheck import mailto, tagged
from dnscheck.resolver import Answer
from dnscheck.verdict import ERROR, OK, Verdict, hosted_cta

KIND = "tls_rpt"


def report_uris(record: str) -> list[str]:
    """The rua= URIs of a `v=TLSRPTv1` record; ValueError says which part is wrong."""
    tags = tagged.parse(record)
    if not tags.get("rua"):
        raise ValueError("it has no rua= saying where reports go")
    uris = [uri.strip() for uri in tags["rua"].split(",")]
    for uri in uris:
        problem = _uri_problem(uri)
        if problem:
            raise ValueError(problem)
    return uris


def _uri_problem(uri: str) -> str:
    """Why a rua= URI cannot receive reports: only mailto: and https: can (RFC 8460 3)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme == "mailto":
        if mailto.host(uri) is None:
            return f"{uri} is not a mailto: address"
        return ""
    if scheme == "https":
        return "" if parts.hostname else f"{uri} names no host"
    return f"{uri or '(empty)'} is neither a mailto: nor an https: URI"


def verdict(domain: str, txt: Answer) -> Verdict:
    """ok with the rua list; missing -> warning (optional record); malformed or several -> error."""
    name = f"_smtp._tls.{domain}"
    cta = hosted_cta(domain, KIND, "Set up TLS-RPT")
    facts = {"rua": [], "records": len(tagged.pick(txt, "TLSRPTv1")[1])}
    early, record = tagged.presence(
        txt, "TLSRPTv1", name=name, label="TLS-RPT", cta=cta, facts=facts,
        benefit="with one, senders send daily reports of failed TLS deliveries to you, so "
                "certificate or MTA-STS trouble shows before mail is lost.")
    if early:
        return early
    try:
        facts["rua"] = report_uris(record)
    except ValueError as problem:
        return Verdict(ERROR, f"The TLS-RPT record at {name} is malformed ({problem}): it must "
                              "read v=TLSRPTv1; rua=mailto:<address> (or https:<URL>).",
                       hosted_cta=cta, facts=facts)
    return Verdict(OK, f"TLS-RPT sends reports of failed TLS deliveries to "
                       f"{', '.join(facts['rua'])}.", facts=facts)


def check(lookup, domain: str) -> Verdict:
    return verdict(domain, lookup.txt(f"_smtp._tls.{domain}"))
