"""Checking stored domains: look them up (several at once, within a time budget), keep each
result on its Domain rows, raise and clear its events, and mark the organizations to refresh."""
from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime

from dnscheck import conditions
from dnscheck.check import KIND_BOUND, DomainCheck, check_domain, selectors_for
from dnscheck.resolver import Lookup
from store import db, events
from store.clock import utcnow
from store.encoding import dumps, loads
from store.job_runs import JobFailed
from store.models import Domain

log = logging.getLogger("rua.dnscheck")
# Domains checked at once. Each has up to check.KIND_BOUND look-ups in flight, so a domain
# whose nameserver is silent holds one of these slots for its timeouts, not the whole run.
DOMAIN_BOUND = 32
VERIFIED = conditions.VERIFIED
NEVER = datetime.min


@dataclass
class Checked:
    """One run's results, and the domains the budget left for the next run."""
    checks: list[DomainCheck] = field(default_factory=list)
    stored: int = 0                       # Domain rows written
    left: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    unanswered: str = ""                  # the resolver answered nothing: why, in one line


@dataclass(frozen=True)
class CheckTarget:
    """A name to check with the selectors to try, and the Domain rows (ids) it is stored into."""
    name: str
    selectors: tuple[str, ...]
    row_ids: tuple[str, ...] = ()


def targets(rows, configured_selectors: str) -> list[CheckTarget]:
    """One target per (name, selectors): rows of several organizations share a check unless
    their reports named different DKIM selectors (one tenant's selectors stay its own)."""
    grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for row_id, name, reported in rows:
        selectors = tuple(selectors_for(reported, configured_selectors))
        grouped.setdefault((name, selectors), []).append(row_id)
    return [CheckTarget(name, selectors, tuple(ids)) for (name, selectors), ids in grouped.items()]


def due_rows(org_id: str | None = None, names: list[str] | None = None):
    """(id, name, dkim_selectors) of monitored domains in the order to check them: never checked,
    then those DNS could not tell about last time, then the longest unchecked. A silent
    nameserver costs a domain its timeouts: started first, they pass while the rest is checked."""
    query = Domain.select(Domain.id, Domain.name, Domain.dkim_selectors, Domain.dns,
                          Domain.dns_checked_at)
    if org_id is not None:
        query = query.where(Domain.org == org_id)
    if names is not None:
        query = query.where(Domain.name.in_(names))
    rows = sorted(query, key=lambda r: (r.dns_checked_at is not None, not _was_unknown(r.dns),
                                        r.dns_checked_at or NEVER, r.name, r.id))
    return [(row.id, row.name, row.dkim_selectors) for row in rows]


def _was_unknown(dns: dict | None) -> bool:
    entry = (dns or {}).get("dmarc")
    return isinstance(entry, dict) and entry.get("status") == "unknown"


def run(config, items: list[CheckTarget], *, now: datetime | None = None,
        budget: float | None = None, store: bool = True) -> Checked:
    """Check `items` in order, DOMAIN_BOUND at a time; past `budget` seconds none more is
    started (those wait for the next run). With `store`, each result is kept as it comes."""
    lookup, result, started = Lookup(config), Checked(), time.monotonic()
    pending = deque(items)
    # Kinds run on a pool of their own, whose threads every domain reuses (a domain's kinds
    # never submit to it, so it cannot fill up with tasks waiting on each other).
    with ThreadPoolExecutor(max_workers=DOMAIN_BOUND) as pool, \
            ThreadPoolExecutor(max_workers=DOMAIN_BOUND * KIND_BOUND) as kinds:
        running = {}
        while pending or running:
            while pending and len(running) < DOMAIN_BOUND:
                if budget is not None and time.monotonic() - started > budget:
                    result.left = [t.name for t in pending]
                    pending.clear()
                    break
                item = pending.popleft()
                running[pool.submit(_check, lookup, config, item, now, kinds)] = item
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                _collect(future, running.pop(future), result, config, store)
    result.unanswered = lookup.dead
    if lookup.dead:
        log.warning("DNS check: %s; %d domain(s) unknown", lookup.dead, len(result.checks))
    return result


def _check(lookup, config, item: CheckTarget, now, kinds):
    return check_domain(lookup, item.name, selectors=list(item.selectors),
                        report_address=config.report_address,
                        mta_sts_port=config.mta_sts_port,
                        allow_private=config.outbound_unsafe_allow_private,
                        now=now or utcnow(), pool=kinds)


def _collect(future, item: CheckTarget, result: Checked, config, store: bool) -> None:
    try:
        check = future.result()
    except Exception:           # one domain's failure must not stop the others' checks
        log.exception("DNS check of %s failed", item.name)
        result.failed.append(item.name)
        return
    result.checks.append(check)
    if store:        # on the caller's thread and connection
        for row_id in item.row_ids:
            result.stored += keep(row_id, check, config.report_address)


def keep(row_id: str, check: DomainCheck, report_address: str) -> int:
    """Store `check` on the Domain row, raise and clear its events; 0 if the row is gone."""
    with db.atomic():
        row = Domain.get_or_none(Domain.id == row_id)
        if row is None:
            return 0
        previous = conditions.Previous.of(row.dns, row.dmarc_state, row.verified_at)
        changed = _apply(row, check, previous)
        row.save()
    outcome = conditions.evaluate(previous, check, report_address)
    org_id = row.org_id
    events.apply(org_id, outcome, check.checked_at)
    if changed:
        events.mark_dirty(org_id, check.checked_at)
    return 1


def _apply(row: Domain, check: DomainCheck, previous: conditions.Previous) -> bool:
    """Copy the check onto the row; True when anything a snapshot shows has changed."""
    def shown():
        return (row.dns, row.verified_at, *(getattr(row, f) for f in check.states))

    before, was_verified = shown(), row.dmarc_state in VERIFIED
    for name, value in check.states.items():
        setattr(row, name, value)
    state = check.states["dmarc_state"]
    if state in VERIFIED and not was_verified:
        row.verified_at = check.checked_at
    elif state not in (*VERIFIED, "unconfirmed", "pending"):
        row.verified_at = None           # a definite answer that it is not ours
    # As JSON reads it back, so an unchanged result compares equal to the stored one.
    row.dns, row.dns_checked_at = loads(dumps(check.dns)), check.checked_at
    if row.dns["dmarc"]["status"] == "unknown" and previous.policy:
        # So a change of p= across a check that could not tell is still seen.
        row.dns["dmarc"][conditions.LAST_POLICY] = previous.policy
    return shown() != before


def check_stored(config, *, org_id: str | None = None, names: list[str] | None = None,
                 now: datetime | None = None, budget: float | None = None) -> Checked:
    """Check and store the monitored domains (of one organization, or only `names`); the
    caller holds the database connection."""
    rows = due_rows(org_id, names)
    return run(config, targets(rows, config.dkim_selectors), now=now, budget=budget)


def check_unstored(config, names: list[str], *, now: datetime | None = None) -> Checked:
    """Check names no organization monitors: printed by the caller, never stored."""
    items = [CheckTarget(n, tuple(selectors_for([], config.dkim_selectors))) for n in names]
    return run(config, items, now=now, store=False)


# The hourly job stops starting new checks after this long, so it ends before the next run is
# due; the domains it did not reach are first in line (oldest check first) next time.
BUDGET_SECONDS = 45 * 60


def scheduled(now: datetime, config) -> Checked | None:
    """The hourly job: check the monitored domains within the budget. Offline (RUA_OFFLINE=1)
    it does nothing (None): a check that can look nothing up learns nothing."""
    if config.offline:
        log.info("DNS check skipped: RUA_OFFLINE is set")
        return None
    result = check_stored(config, now=now, budget=BUDGET_SECONDS)
    log.info("DNS checked %d domain(s), %d failed, %d left for the next run",
             len(result.checks), len(result.failed), len(result.left))
    if result.unanswered:
        raise JobFailed(f"DNS check: {result.unanswered}: no domain could be checked")
    if result.failed:
        raise JobFailed(f"DNS check of {len(result.failed)} domain(s) failed: "
                        f"{', '.join(result.failed[:5])}")
    return result
