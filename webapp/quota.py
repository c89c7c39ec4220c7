"""Hourly quotas: meter each authenticated request, refuse when spent, say so in headers.

The counting lives in store.usage (exact across workers and hosts) and the plans' limits in
store.plans; this module turns them into verdicts, 429s and header fields.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime

from flask import g

from store import usage
from store.clock import to_epoch
from store.plans import PLANS, Plan
from webapp.errors import ApiError

NEAR_CAP = 10                        # percent of the hour left at or below which it is near_cap
HEAVY_RULE = re.compile(r"/domains/<[^>]+>/health$")
UNCOUNTED_RULE = re.compile(r"/api-keys/usage$")


@dataclass(frozen=True)
class QuotaStanding:
    """Where the organization stands after this request, and whether it may proceed."""
    plan: Plan
    tally: usage.MeterReading
    now: int                         # epoch seconds
    heavy: bool                      # the request was on the heavy route

    @property
    def reset(self) -> int:
        return usage.hour_of(self.now) + usage.HOUR

    @property
    def remaining(self) -> int:
        return max(self.plan.hourly - self.tally.used, 0) if self.plan.capped else -1

    @property
    def heavy_remaining(self) -> int:
        return max(self.plan.heavy - self.tally.heavy_used, 0) if self.plan.capped else -1


def plan_of(name: str) -> Plan:
    """The organization's plan; 503 plan_unavailable when its name is not one we know."""
    plan = PLANS.get(name)
    if plan is None:
        raise ApiError(503, "plan_unavailable", headers={"Retry-After": "1"})
    return plan


def near_cap(remaining: int, limit: int) -> bool:
    return limit > 0 and 0 <= remaining * 100 <= limit * NEAR_CAP


def crossed_near_cap(verdict: QuotaStanding) -> bool:
    """True for the one allowed request of the hour that leaves it just near_cap."""
    limit, left = verdict.plan.hourly, verdict.remaining
    return (verdict.tally.allowed and verdict.plan.capped
            and near_cap(left, limit) and not near_cap(left + 1, limit))


def meter(principal, now: datetime, *, heavy: bool = False, counted: bool = True) -> QuotaStanding:
    """Count one request of the principal's organization and key (or only abuse-check it)."""
    plan, epoch = plan_of(principal.plan), to_epoch(now)
    if counted:
        tally = usage.admit(principal.org_id, principal.key_id, epoch, limit=plan.hourly,
                            heavy_limit=plan.heavy, heavy=heavy)
    else:
        tally = usage.peek(principal.org_id, principal.key_id, epoch)
    verdict = QuotaStanding(plan, tally, epoch, heavy)
    if crossed_near_cap(verdict):
        usage.record_near_cap(principal.org_id, epoch, plan.hourly)
    return verdict


def headers(verdict: QuotaStanding) -> dict[str, str]:
    """X-RateLimit-* and the IETF RateLimit-Policy / RateLimit fields; none on an uncapped plan."""
    plan = verdict.plan
    if not plan.capped:
        return {}
    left = verdict.reset - verdict.now
    policy = [f'"hourly";q={plan.hourly};w={usage.HOUR}']
    state = [f'"hourly";r={verdict.remaining};t={left}']
    if verdict.heavy:
        policy.append(f'"heavy";q={plan.heavy};w={usage.HOUR}')
        state.append(f'"heavy";r={verdict.heavy_remaining};t={left}')
    return {
        "X-RateLimit-Limit": str(plan.hourly),
        "X-RateLimit-Remaining": str(verdict.remaining),
        "X-RateLimit-Reset": str(verdict.reset),
        "RateLimit-Policy": ", ".join(policy),
        "RateLimit": ", ".join(state),
    }


def refusal(verdict: QuotaStanding) -> ApiError | None:
    """The 429 for a refused request: rate_limited (abuse) or quota_exceeded (hour or heavy)."""
    tally = verdict.tally
    if tally.allowed:
        return None
    code = "rate_limited" if tally.outcome == "abuse" else "quota_exceeded"
    return ApiError(429, code, headers={"Retry-After": str(max(tally.retry_after, 1))})


@functools.lru_cache(maxsize=None)
def route_kind(rule: str) -> tuple[bool, bool]:
    """(heavy, counted) of a URL rule; rules are few and fixed, so each is classified once."""
    return bool(HEAVY_RULE.search(rule)), not UNCOUNTED_RULE.search(rule)


def gate(ctx, principal, now: datetime, *, heavy: bool, counted: bool) -> None:
    """The request checks' step after authentication: meter, then refuse with 429 if spent."""
    ctx.quota = verdict = meter(principal, now, heavy=heavy, counted=counted)
    error = refusal(verdict)
    if error is not None:
        raise error


def add_headers(response):
    """After every request: a metered response of a capped plan carries the quota headers
    (the 4xx answers raised after metering too); an uncapped plan has none."""
    verdict = g.get("quota")
    if verdict is not None and verdict.plan.capped:
        response.headers.extend(headers(verdict))     # none of them is set before this step
    return response
