"""Hourly quota, heavy budget and abuse control as clients see them: statuses and headers."""
from __future__ import annotations

import logging
import re
from datetime import datetime

import pytest

from snapshotter import jobs
from store import usage
from store.clock import to_epoch
from store.models import Event, Usage
from store.plans import PLANS
from tests.factories import make_domain, make_key, make_org, make_usage
from tests.webapp.helpers import assert_error, get
from webapp import quota
from webapp.errors import ApiError

NOON = datetime(2025, 6, 1, 12, 0, 0)
RESET = to_epoch(datetime(2025, 6, 1, 13, 0, 0))
FREE, TEAM = PLANS["free"], PLANS["team"]


def verdict(plan=FREE, used=3, heavy_used=0, heavy=False, outcome="allowed", now=RESET - 1234):
    return quota.QuotaStanding(plan, usage.MeterReading(outcome, used, heavy_used), now, heavy)


@pytest.fixture
def free_key(app, clock):
    clock.now = NOON
    row, plaintext = make_key(make_org(plan="free"))
    return row, plaintext


def test_headers_of_a_capped_plan_follow_the_decisions():
    assert quota.headers(verdict()) == {
        "X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "997",
        "X-RateLimit-Reset": str(RESET),
        "RateLimit-Policy": '"hourly";q=1000;w=3600', "RateLimit": '"hourly";r=997;t=1234'}


def test_the_heavy_route_adds_its_heavy_policy_items():
    headers = quota.headers(verdict(TEAM, used=10, heavy_used=4, heavy=True))
    assert headers["RateLimit-Policy"] == '"hourly";q=10000;w=3600, "heavy";q=600;w=3600'
    assert headers["RateLimit"] == '"hourly";r=9990;t=1234, "heavy";r=596;t=1234'
    assert headers["X-RateLimit-Remaining"] == "9990"


def test_uncapped_plans_send_no_quota_headers():
    assert quota.headers(verdict(PLANS["unlimited"], used=5000)) == {}


@pytest.mark.parametrize("remaining, limit, near", [
    (101, 1000, False), (100, 1000, True), (0, 1000, True), (1000, 10000, True),
    (1001, 10000, False), (-1, 0, False)])
def test_near_cap_is_ten_percent_or_less_of_the_hour_left(remaining, limit, near):
    assert quota.near_cap(remaining, limit) is near


@pytest.mark.parametrize("used, crossed", [(899, False), (900, True), (901, False), (1000, False)])
def test_only_the_request_that_leaves_ten_percent_crosses_into_near_cap(used, crossed):
    assert quota.crossed_near_cap(verdict(used=used)) is crossed


@pytest.mark.parametrize("outcome, code", [("quota", "quota_exceeded"), ("heavy", "quota_exceeded"),
                                           ("abuse", "rate_limited")])
def test_refusals_are_429_with_their_code(outcome, code):
    reading = usage.MeterReading(outcome, 1000, 0, 42)
    error = quota.refusal(quota.QuotaStanding(FREE, reading, RESET - 42, False))
    assert (error.status, error.code, error.headers) == (429, code, {"Retry-After": "42"})


def test_an_unknown_plan_cannot_be_resolved():
    with pytest.raises(ApiError) as raised:
        quota.plan_of("enterprise")
    assert (raised.value.status, raised.value.code) == (503, "plan_unavailable")


def test_headers_decrease_one_by_one_on_sequential_requests(client, free_key):
    remaining = [get(client, "/enums", free_key[1]).headers["X-RateLimit-Remaining"]
                 for _ in range(5)]
    assert remaining == ["999", "998", "997", "996", "995"]


def test_every_metered_response_carries_the_headers_4xx_included(client, free_key, clock):
    _, viewer = make_key(free_key[0].org, role="billing")
    forbidden = get(client, "/enums", viewer)
    bad_days = get(client, "/api-keys/usage?days=0", free_key[1])
    assert (forbidden.status_code, bad_days.status_code) == (403, 400)
    for resp in (forbidden, bad_days):
        assert resp.headers["X-RateLimit-Reset"] == str(RESET)
        assert resp.headers["RateLimit-Policy"] == '"hourly";q=1000;w=3600'


def test_a_304_and_a_404_after_authentication_are_metered_with_the_headers(client, free_key, clock):
    jobs.refresh_org(free_key[0].org_id, NOON)
    etag = get(client, "/dashboard/overview", free_key[1]).headers["ETag"]
    not_modified = get(client, "/dashboard/overview", free_key[1], **{"If-None-Match": etag})
    missing = get(client, "/reports/01HQ3Z7K8V9W0X1Y2Z3A4B5C6D", free_key[1])
    assert (not_modified.status_code, missing.status_code) == (304, 404)
    assert not_modified.headers["X-RateLimit-Remaining"] == "998"
    assert missing.headers["X-RateLimit-Remaining"] == "997"
    assert missing.headers["RateLimit"] == '"hourly";r=997;t=3600'


def test_an_unauthenticated_request_is_not_metered(client, free_key):
    resp = client.get("/api/v1/enums")
    assert resp.status_code == 401 and "X-RateLimit-Limit" not in resp.headers
    assert Usage.select().count() == 0


def test_a_spent_hour_is_429_quota_exceeded_until_the_hour_ends(client, free_key, clock):
    row, plaintext = free_key
    make_usage(row.org, hour=to_epoch(NOON), allowed=1000)
    clock.now = datetime(2025, 6, 1, 12, 59, 0)
    refused = get(client, "/enums", plaintext)
    assert_error(refused, 429, "quota_exceeded")
    assert refused.headers["Retry-After"] == "60"
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["RateLimit"] == '"hourly";r=0;t=60'
    clock.now = datetime(2025, 6, 1, 13, 0, 0)
    served = get(client, "/enums", plaintext)
    assert (served.status_code, served.headers["X-RateLimit-Remaining"]) == (200, "999")
    assert usage.hour_counts(row.org_id, to_epoch(NOON)) == (1000, 1, 0)


def test_abuse_control_trips_at_request_51_within_ten_seconds(client, free_key, clock):
    statuses = [get(client, "/enums", free_key[1]).status_code for _ in range(50)]
    clock.now = datetime(2025, 6, 1, 12, 0, 9)
    refused = get(client, "/enums", free_key[1])
    assert statuses == [200] * 50
    assert_error(refused, 429, "rate_limited")
    assert refused.headers["Retry-After"] == "1"
    assert refused.headers["X-RateLimit-Remaining"] == "950"


def test_abuse_control_is_per_key(client, free_key):
    for _ in range(50):
        get(client, "/enums", free_key[1])
    _, other = make_key(free_key[0].org)
    assert get(client, "/enums", other).status_code == 200


def test_unlimited_plans_send_no_headers_and_are_never_refused(client, clock):
    clock.now = NOON
    row, plaintext = make_key(make_org(plan="unlimited"))
    make_usage(row.org, hour=to_epoch(NOON), allowed=50_000)
    resp = get(client, "/enums", plaintext)
    assert resp.status_code == 200
    assert not [h for h in resp.headers.keys() if h.lower().startswith(("x-ratelimit", "ratelimit"))]
    assert usage.hour_counts(row.org_id, to_epoch(NOON)) == (50_001, 0, 0)


def test_the_usage_endpoint_is_neither_counted_nor_refused_for_the_quota(client, free_key):
    row, plaintext = free_key
    make_usage(row.org, hour=to_epoch(NOON), allowed=1000)
    for _ in range(3):
        resp = get(client, "/api-keys/usage", plaintext)
        assert resp.status_code == 200
        assert resp.headers["X-RateLimit-Remaining"] == "0"
    assert usage.hour_counts(row.org_id, to_epoch(NOON)) == (1000, 0, 0)


def test_the_usage_endpoint_is_still_under_abuse_control(client, free_key):
    statuses = [get(client, "/api-keys/usage", free_key[1]).status_code for _ in range(51)]
    assert statuses == [200] * 50 + [429]


def test_crossing_into_near_cap_records_one_event_per_hour(client, free_key):
    row, plaintext = free_key
    make_usage(row.org, hour=to_epoch(NOON), allowed=898)
    for _ in range(4):
        get(client, "/enums", plaintext)
    events = list(Event.select().where(Event.org == row.org_id))
    assert [(e.type, e.created_at) for e in events] == [("quota_near_cap", NOON)]


def test_an_organization_whose_plan_cannot_be_resolved_gets_503(client, clock):
    clock.now = NOON
    _, plaintext = make_key(make_org(plan="legacy"))
    assert_error(get(client, "/api-keys/usage", plaintext), 503, "plan_unavailable")


def test_a_heavy_request_costs_one_of_the_hour_and_one_of_the_heavy_budget(client, free_key):
    row, plaintext = free_key
    make_domain(row.org, "example.com")
    resp = get(client, "/domains/example.com/health", plaintext)
    assert resp.headers["RateLimit-Policy"] == '"hourly";q=1000;w=3600, "heavy";q=60;w=3600'
    assert resp.headers["RateLimit"] == '"hourly";r=999;t=3600, "heavy";r=59;t=3600'
    assert resp.headers["X-RateLimit-Remaining"] == "999"


def test_a_spent_heavy_budget_refuses_the_heavy_route_only(client, free_key):
    row, plaintext = free_key
    make_domain(row.org, "example.com")
    make_usage(row.org, hour=to_epoch(NOON), allowed=100, heavy=60)
    refused = get(client, "/domains/example.com/health", plaintext)
    assert_error(refused, 429, "quota_exceeded")
    assert refused.headers["Retry-After"] == "3600"
    assert refused.headers["RateLimit"] == '"hourly";r=900;t=3600, "heavy";r=0;t=3600'
    served = get(client, "/enums", plaintext)
    assert (served.status_code, served.headers["X-RateLimit-Remaining"]) == (200, "899")


class _Statements(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.sql = []

    def emit(self, record):
        if record.name == "peewee":
            self.sql.append(str(record.msg[0]))


def test_an_allowed_request_is_metered_in_one_statement(client, free_key):
    for _ in range(2):     # the hour's first request also prunes, and keeps last_used_at
        get(client, "/enums", free_key[1])
    logger, handler = logging.getLogger("peewee"), _Statements()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        get(client, "/enums", free_key[1])
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    metering = [sql for sql in handler.sql if re.search(r'\busage\b|rua_admit', sql)]
    assert len(metering) == 1
