"""One domain's live check: every record kind looked up at once, then its verification states."""
from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime

from dnscheck import bimi, dane, dkim, dmarc, mta_sts, spf, states, tls_rpt
from dnscheck.resolver import Lookup, gather
from store.clock import utcnow

KINDS = ("dmarc", "spf", "dkim", "mta_sts", "tls_rpt", "bimi", "dane")
STATE_FIELDS = ("dmarc_state", "tlsrpt_state", "forensic_state", "verified_source",
                "inherited_from", "tlsrpt_enabled", "forensic_enabled")
SHOWN = ("status", "details", "inherited_from")     # of each kind, in the JSON line
# Look-ups of one domain in flight at once: every kind but BIMI, plus BIMI's record fetched early.
KIND_BOUND = 8


@dataclass(frozen=True)
class DomainCheck:
    """What the check found: each kind's stored verdict, the states, and the SPF lookup count."""
    domain: str
    checked_at: datetime
    dns: dict
    states: dict
    spf_lookups: int | None

    def line(self) -> dict:
        """The `rua dns check --format json` object (issue 16's list of fields)."""
        shown = {kind: {k: v[k] for k in SHOWN if k in v} for kind, v in self.dns.items()}
        return {"domain": self.domain, "checked_at": self.checked_at, "dns": shown,
                **{k: self.states[k] for k in ("dmarc_state", "tlsrpt_state", "forensic_state",
                                               "verified_source", "inherited_from")},
                "spf_lookups": self.spf_lookups}


def check_domain(lookup: Lookup, domain: str, *, selectors: list[str], report_address: str,
                 mta_sts_port: int = 443, allow_private: bool = False,
                 now: datetime | None = None, pool: Executor | None = None) -> DomainCheck:
    """Check every kind of `domain` concurrently (on `pool` when given, which a run of many
    domains shares); BIMI, which weighs the DMARC policy, after it."""
    checked_at = now or utcnow()
    verdicts = _all({
        "dmarc": lambda: dmarc.check(lookup, domain),
        "spf": lambda: spf.check(lookup, domain),
        "dkim": lambda: dkim.check(lookup, domain, selectors),
        "mta_sts": lambda: mta_sts.check(lookup, domain, port=mta_sts_port,
                                         allow_private=allow_private),
        "tls_rpt": lambda: tls_rpt.check(lookup, domain),
        "dane": lambda: dane.check(lookup, domain),
        # Asked now so BIMI's own check finds it answered: a dead nameserver then costs its
        # timeout once, beside DMARC's, not once more after it.
        "bimi_record": lambda: lookup.txt(f"default._bimi.{domain}"),
    }, pool)
    verdicts["bimi"] = bimi.check(lookup, domain, verdicts["dmarc"])
    found = states.verification(verdicts["dmarc"], verdicts["tls_rpt"], report_address)
    return DomainCheck(domain=domain, checked_at=checked_at,
                       dns={kind: verdicts[kind].as_stored() for kind in KINDS},
                       states={k: found[k] for k in STATE_FIELDS},
                       spf_lookups=verdicts["spf"].facts.get("lookups"))


def _all(calls: dict, pool: Executor | None) -> dict:
    if pool is None:
        return gather(calls, bound=KIND_BOUND)
    futures = {key: pool.submit(call) for key, call in calls.items()}
    return {key: future.result() for key, future in futures.items()}


def selectors_for(reported: list[str] | None, configured: str) -> list[str]:
    """The selectors the domain's reports named, then the configured common ones, once each."""
    common = [s.strip() for s in configured.split(",") if s.strip()]
    return list(dict.fromkeys([*(reported or []), *common]))
