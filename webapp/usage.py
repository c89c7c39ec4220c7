"""GET /api-keys/usage: where the organization stands this hour, its chart, every key's share."""
from __future__ import annotations

from flask import Blueprint, current_app, g, request

from store import usage
from store.clock import from_epoch
from store.models import ApiKey
from webapp import params
from webapp.auth import requires
from store.plans import Plan
from webapp.quota import near_cap

bp = Blueprint("usage", __name__)

DAY = 24 * usage.HOUR
HOURLY_UP_TO_DAYS = 2                # a window of two days or less is charted by the hour


def buckets(days: int, now: int) -> tuple[str, list[int]]:
    """The bucket size name and the start (epoch) of every bucket, oldest first, ending now."""
    if days <= HOURLY_UP_TO_DAYS:
        last, size, count = usage.hour_of(now), usage.HOUR, days * 24
    else:
        last, size, count = now - now % DAY, DAY, days
    starts = [last - size * i for i in range(count - 1, -1, -1)]
    return ("hour" if size == usage.HOUR else "day"), starts


def points(starts: list[int], size: int, hourly: dict[int, tuple[int, int]]) -> list[dict]:
    """One zero-filled point per bucket, summing the hours that fall in it."""
    totals = {start: [0, 0] for start in starts}
    for hour, (allowed, rejected) in hourly.items():
        start = hour - (hour - starts[0]) % size
        if start in totals:
            totals[start][0] += allowed
            totals[start][1] += rejected
    return [{"ts": from_epoch(start), "allowed": a, "rejected": r}
            for start, (a, r) in totals.items()]


def _requests(count: int) -> str:
    return f"{count:,} request" if count == 1 else f"{count:,} requests"


def _period(days: int) -> str:
    return "day" if days == 1 else f"{days} days"


def verdict(plan: Plan, *, ever: bool, used: int, remaining: int, reset: int,
            refused: int, days: int, quota_spent: bool) -> dict:
    """The state of the contract and a sentence a person can act on. quota_spent: some hour of
    the window used the whole hourly quota (else refusals came from bursts or the heavy route,
    which a larger plan's quota would not have spared)."""
    until = from_epoch(reset).strftime("%H:%M UTC")
    if not ever:
        return {"state": "no_traffic", "summary": "No API requests yet: requests made with this "
                "organization's keys will be counted here, hour by hour."}
    if not plan.capped:
        return {"state": "unlimited", "summary": f"Your plan has no hourly cap; "
                f"{_requests(used)} so far this hour."}
    left = f"{remaining:,} of {plan.hourly:,} requests are left this hour (resets at {until})"
    if refused:
        verb = "was" if refused == 1 else "were"
        refusals = f"{_requests(refused)} {verb} refused in the last {_period(days)}"
        if not quota_spent:
            return {"state": "capped", "summary": f"{refusals}, though the hourly quota was never "
                    f"spent: too many requests came from one key within seconds, or the health "
                    f"route's own budget ran out. {left}. Space requests out and wait as "
                    "Retry-After says; a larger plan does not raise the burst limit."}
        return {"state": "capped", "summary": f"{refusals} because the hourly quota was spent. "
                f"{left}. Poll less often, spread requests over the hour, or move to a larger "
                "plan."}
    if near_cap(remaining, plan.hourly):
        return {"state": "near_cap", "summary": f"Only {left}. Slow down polling until then, "
                "or requests will be refused with 429."}
    return {"state": "ok", "summary": f"{used:,} of {plan.hourly:,} requests used this hour; "
            f"{remaining:,} left until {until}."}


def _keys(org_id: str, first_hour: int, last_hour: int) -> list[dict]:
    counts = usage.per_key(org_id, first_hour, last_hour)
    rows = ApiKey.select().where(ApiKey.org == org_id).order_by(ApiKey.created_at, ApiKey.id)
    listed = []
    for key in rows:
        allowed, rejected, last_at = counts.get(key.id, (0, 0, 0))
        listed.append({"id": key.id, "name": key.name, "prefix": key.prefix,
                       "allowed": allowed, "rejected": rejected,
                       "revoked": key.revoked_at is not None,
                       "last_used_at": usage.last_use(key.last_used_at, last_at)})
    return listed


@bp.get("/api-keys/usage")
@requires("integration:read")
def show():
    days = params.days(request.args, default=30, lo=1, hi=90, strict=True)
    quota, org_id = g.quota, g.principal.org_id
    bucket, starts = buckets(days, quota.now)
    size = usage.HOUR if bucket == "hour" else DAY
    first_hour, last_hour = starts[0], usage.hour_of(quota.now)
    hourly = usage.hourly(org_id, first_hour, last_hour)
    chart = points(starts, size, hourly)
    capped = quota.plan.capped
    return {
        "days": days,
        "bucket": bucket,
        "window": {"used": quota.tally.used, "remaining": quota.remaining,
                   "limit": quota.plan.hourly if capped else 0,
                   # An uncapped plan has nothing to reset.
                   "reset_at": from_epoch(quota.reset) if capped else None},
        "verdict": verdict(quota.plan, ever=usage.ever_metered(org_id), used=quota.tally.used,
                           remaining=quota.remaining, reset=quota.reset,
                           refused=sum(p["rejected"] for p in chart), days=days,
                           quota_spent=capped and any(allowed >= quota.plan.hourly
                                                      for allowed, _ in hourly.values())),
        "points": chart,
        "keys": _keys(org_id, first_hour, last_hour),
        "api_base_url": current_app.config["RUA"].base_url,
    }
