"""The hosts a domain's mail goes to, from its MX answer (MTA-STS and DANE both check them)."""
from __future__ import annotations

from dnscheck.resolver import Answer


def mail_hosts(answer: Answer, domain: str) -> tuple[str, ...] | None:
    """MX hosts, best first; () when the domain takes no mail; None when DNS could not tell.

    No MX record means the domain itself is the mail host (RFC 5321 5.1); a null MX (`0 .`,
    RFC 7505) or a domain that does not exist means no mail at all."""
    if answer.unknown:
        return None
    if answer.missing:
        return () if answer.nxdomain else (domain.lower().rstrip("."),)
    ranked = []
    for record in answer.records:
        preference, _, host = record.partition(" ")
        host = host.strip().lower().rstrip(".")
        if host and preference.isdigit():
            ranked.append((int(preference), host))
    return tuple(dict.fromkeys(host for _, host in sorted(ranked)))
