"""Identifier alignment (RFC 7489 section 3.1) and the report's failure summary: pure functions."""
from __future__ import annotations

from typing import Iterable

from store.domain_names import organizational_domain


def _name(domain: str | None) -> str:
    return (domain or "").strip().rstrip(".").lower()


def aligned(auth_domain: str | None, header_from: str | None, mode: str | None) -> bool:
    """Whether an authenticated domain aligns with the From domain: strict ("s") needs the same
    name, anything else (relaxed, the default) the same organizational domain by the PSL."""
    auth, author = _name(auth_domain), _name(header_from)
    if not auth or not author:
        return False
    if auth == author:
        return True
    if (mode or "").strip().lower() == "s":
        return False
    return organizational_domain(auth) == organizational_domain(author)


def record_alignment(record, adkim: str | None, aspf: str | None) -> dict:
    """Per auth result, whether its domain aligns with HeaderFrom, whatever its result."""
    return {
        "spf": _each(record.auth_spf, record.header_from, aspf),
        "dkim": _each(record.auth_dkim, record.header_from, adkim),
    }


def _each(results: list[dict] | None, header_from: str, mode: str | None) -> list[bool] | None:
    if results is None:
        return None
    return [aligned(result.get("Domain"), header_from, mode) for result in results]


def dmarc_pass(dkim: str | None, spf: str | None) -> bool:
    """DMARC's pass (RFC 7489 section 6.6.2): the policy-evaluated DKIM or SPF verdict, each
    an aligned pass, is pass. Verdicts come in lower case, as the parser stores them."""
    return dkim == "pass" or spf == "pass"


def failure_summary(records: Iterable) -> dict:
    """Records by which aligned check failed in PolicyEvaluated; the three buckets never overlap."""
    summary = {"spf_only": 0, "dkim_only": 0, "both": 0, "total": 0}
    for record in records:
        summary["total"] += 1
        spf_failed = record.spf != "pass"
        dkim_failed = record.dkim != "pass"
        if spf_failed and dkim_failed:
            summary["both"] += 1
        elif spf_failed:
            summary["spf_only"] += 1
        elif dkim_failed:
            summary["dkim_only"] += 1
    return summary
