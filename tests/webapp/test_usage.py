"""GET /api-keys/usage: the window, the verdict a person can act on, the chart and every key."""
from __future__ import annotations

from datetime import datetime

import pytest

from store.clock import to_epoch
from store.plans import PLANS
from tests.factories import make_key, make_org, make_usage
from tests.webapp.helpers import assert_error, get
from webapp import usage as page

NOON = datetime(2025, 6, 1, 12, 30, 0)
HOUR = to_epoch(datetime(2025, 6, 1, 12, 0, 0))
TODAY = to_epoch(datetime(2025, 6, 1))
FREE = PLANS["free"]


@pytest.fixture
def free(app, clock):
    """A free-plan organization and an owner key's (row, plaintext), at 12:30 UTC."""
    clock.now = NOON
    return make_key(make_org(plan="free"), name="poller")


def usage_of(client, plaintext, query=""):
    resp = get(client, "/api-keys/usage" + query, plaintext)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


@pytest.mark.parametrize("days, bucket, count, first", [
    (1, "hour", 24, HOUR - 23 * 3600), (2, "hour", 48, HOUR - 47 * 3600),
    (3, "day", 3, TODAY - 2 * 86400), (90, "day", 90, TODAY - 89 * 86400)])
def test_buckets_are_hours_up_to_two_days_and_days_beyond(days, bucket, count, first):
    name, starts = page.buckets(days, to_epoch(NOON))
    assert (name, len(starts), starts[0]) == (bucket, count, first)
    assert starts == sorted(starts)


def test_points_sum_hours_into_their_day_and_zero_fill_the_rest():
    starts = [TODAY - 86400, TODAY]
    chart = page.points(starts, 86400, {HOUR: (5, 1), HOUR - 3600: (2, 0), TODAY - 3600: (7, 0)})
    assert [(p["allowed"], p["rejected"]) for p in chart] == [(7, 0), (7, 1)]
    assert [p["ts"] for p in chart] == [datetime(2025, 5, 31), datetime(2025, 6, 1)]


@pytest.mark.parametrize("plan, ever, used, refused, state", [
    (FREE, False, 0, 0, "no_traffic"),
    (PLANS["unlimited"], True, 5, 0, "unlimited"),
    (FREE, True, 1000, 3, "capped"),
    (FREE, True, 10, 3, "capped"),
    (FREE, True, 900, 0, "near_cap"),
    (FREE, True, 899, 0, "ok"),
])
def test_verdict_states_follow_the_contract(plan, ever, used, refused, state):
    remaining = plan.hourly - used if plan.capped else -1
    result = page.verdict(plan, ever=ever, used=used, remaining=remaining, reset=HOUR + 3600,
                          refused=refused, days=30, quota_spent=used >= 1000)
    assert result["state"] == state
    assert result["summary"].endswith(".")


def test_summaries_say_what_to_do_and_when_it_resets():
    capped = page.verdict(FREE, ever=True, used=1000, remaining=0, reset=HOUR + 3600,
                          refused=12, days=1, quota_spent=True)["summary"]
    assert capped.startswith("12 requests were refused in the last day")
    assert "0 of 1,000 requests are left this hour (resets at 13:00 UTC)" in capped
    near = page.verdict(FREE, ever=True, used=950, remaining=50, reset=HOUR + 3600,
                        refused=0, days=1, quota_spent=False)["summary"]
    assert near.startswith("Only 50 of 1,000 requests are left this hour")


def test_a_new_organization_has_no_traffic_and_a_zero_filled_chart(client, free):
    body = usage_of(client, free[1])
    assert (body["days"], body["bucket"], len(body["points"])) == (30, "day", 30)
    assert body["window"] == {"used": 0, "remaining": 1000, "limit": 1000,
                              "reset_at": "2025-06-01T13:00:00Z"}
    assert body["verdict"]["state"] == "no_traffic"
    assert {(p["allowed"], p["rejected"]) for p in body["points"]} == {(0, 0)}
    assert body["points"][-1]["ts"] == "2025-06-01T00:00:00Z"
    assert body["api_base_url"] == "http://127.0.0.1:8000/api/v1"


def test_requests_show_in_the_window_the_hourly_chart_and_the_key(client, free):
    row, plaintext = free
    for _ in range(3):
        get(client, "/enums", plaintext)
    body = usage_of(client, plaintext, "?days=1")
    assert (body["bucket"], len(body["points"])) == ("hour", 24)
    assert body["points"][-1] == {"ts": "2025-06-01T12:00:00Z", "allowed": 3, "rejected": 0}
    assert (body["window"]["used"], body["window"]["remaining"]) == (3, 997)
    assert body["verdict"]["state"] == "ok"
    assert body["keys"] == [{"id": row.id, "name": "poller", "prefix": row.prefix, "allowed": 3,
                             "rejected": 0, "revoked": False,
                             "last_used_at": "2025-06-01T12:30:00Z"}]


def test_a_refusal_in_the_window_makes_the_verdict_capped(client, free):
    row, plaintext = free
    make_usage(row.org, hour=HOUR - 5 * 3600, allowed=1000, rejected=4)
    make_usage(row.org, hour=HOUR - 5 * 3600, key_id=row.id, allowed=1000, rejected=4)
    get(client, "/enums", plaintext)
    body = usage_of(client, plaintext, "?days=1")
    assert body["verdict"]["state"] == "capped"
    assert (body["keys"][0]["allowed"], body["keys"][0]["rejected"]) == (1001, 4)


def test_refusals_by_the_burst_limit_advise_spacing_requests_not_a_larger_plan(client, free):
    row, plaintext = free
    make_usage(row.org, hour=HOUR, allowed=66, rejected=5)      # 429 rate_limited, quota unspent
    body = usage_of(client, plaintext, "?days=1")
    summary = body["verdict"]["summary"]
    assert body["verdict"]["state"] == "capped"
    assert "the hourly quota was never spent" in summary and "larger plan does not" in summary
    assert "move to a larger plan" not in summary
    make_usage(row.org, hour=HOUR - 3600, allowed=1000, rejected=2)      # this one was spent
    summary = usage_of(client, plaintext, "?days=1")["verdict"]["summary"]
    assert "because the hourly quota was spent" in summary and "move to a larger plan" in summary


def test_refusals_older_than_the_window_do_not_count(client, free):
    row, plaintext = free
    make_usage(row.org, hour=HOUR - 30 * 3600, allowed=1000, rejected=4)
    get(client, "/enums", plaintext)
    assert usage_of(client, plaintext, "?days=1")["verdict"]["state"] == "ok"
    assert usage_of(client, plaintext, "?days=2")["verdict"]["state"] == "capped"


def test_near_cap_at_ten_percent_left(client, free):
    row, plaintext = free
    make_usage(row.org, hour=HOUR, allowed=899)
    get(client, "/enums", plaintext)
    body = usage_of(client, plaintext)
    assert (body["window"]["remaining"], body["verdict"]["state"]) == (100, "near_cap")


def test_unlimited_plans_show_no_cap(client, clock):
    clock.now = NOON
    _, plaintext = make_key(make_org(plan="unlimited"))
    get(client, "/enums", plaintext)
    body = usage_of(client, plaintext)
    assert body["window"] == {"used": 1, "remaining": -1, "limit": 0, "reset_at": None}
    assert body["verdict"]["state"] == "unlimited"


def test_revoked_keys_are_still_listed_with_their_past_usage(client, free):
    row, plaintext = free
    revoked, _ = make_key(row.org, name="old", revoked_at=datetime(2025, 6, 1, 11, 0, 0))
    make_usage(row.org, hour=HOUR - 3600, key_id=revoked.id, allowed=7, last_at=HOUR - 60)
    keys = {k["name"]: k for k in usage_of(client, plaintext)["keys"]}
    assert keys["old"]["revoked"] is True
    assert (keys["old"]["allowed"], keys["old"]["last_used_at"]) == (7, "2025-06-01T11:59:00Z")
    assert keys["poller"]["revoked"] is False


def test_every_key_of_the_organization_is_listed_and_no_other(client, free):
    row, plaintext = free
    make_key(row.org, name="unused")
    make_key(make_org(), name="stranger")
    keys = {k["name"]: k for k in usage_of(client, plaintext)["keys"]}
    assert sorted(keys) == ["poller", "unused"]
    assert keys["unused"]["last_used_at"] is None


@pytest.mark.parametrize("days", ["0", "91", "-1", "abc", "1.5", ""])
def test_days_outside_1_to_90_is_400_invalid_days(client, free, days):
    assert_error(get(client, f"/api-keys/usage?days={days}", free[1]), 400, "invalid_days")


def test_the_usage_endpoint_needs_integration_read(client, free):
    _, analyst = make_key(free[0].org, role="analyst")
    _, billing = make_key(free[0].org, role="billing")
    assert_error(get(client, "/api-keys/usage", analyst), 403, "insufficient_permission",
                 required="integration:read")
    assert get(client, "/api-keys/usage", billing).status_code == 200


@pytest.mark.parametrize("refused, words", [(1, "1 request was refused"), (3, "3 requests were refused")])
def test_the_capped_sentence_counts_in_plain_english(refused, words):
    summary = page.verdict(PLANS["free"], ever=True, used=10, remaining=990, reset=3600,
                           refused=refused, days=1, quota_spent=False)["summary"]
    assert summary.startswith(words)
