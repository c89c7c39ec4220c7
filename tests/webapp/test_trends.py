"""GET /trends: slices of one stored 365-day series, zero-filled, oldest first."""
from datetime import timedelta

import pytest

from snapshotter import jobs
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.webapp.helpers import assert_error, get


@pytest.fixture
def trended(org, clock):
    clock.now = NOW
    report_on(org, "example.com", TODAY - timedelta(days=2), [{"count": 4}, {"count": 1, "dkim": "fail", "spf": "fail"}])
    report_on(org, "example.org", TODAY - timedelta(days=2), [{"count": 5}])
    jobs.refresh_org(org.id, NOW)
    return org


def test_trends_default_to_30_days_ending_yesterday_with_zero_filled_days(client, trended, key):
    body = get(client, "/trends", key).get_json()
    assert body["days"] == 30 and len(body["points"]) == 30
    # Today holds no reported messages yet: no zero point for it (decisions.md).
    assert body["points"][-1]["date"] == (TODAY - timedelta(days=1)).isoformat()
    assert body["points"][-2] == {"date": (TODAY - timedelta(days=2)).isoformat(), "total_messages": 10,
                                  "compliant_messages": 9, "failed_messages": 1, "reports": 2,
                                  "compliance_rate": 90.0}
    assert body["points"][0]["total_messages"] == 0 and body["points"][0]["compliance_rate"] == 0.0


@pytest.mark.parametrize("query, days", [("?days=1", 1), ("?days=365", 365), ("?days=366", 30),
                                         ("?days=0", 30), ("?days=x", 30), ("?days=7", 7)])
def test_days_between_1_and_365_apply_and_others_fall_back_to_30(client, trended, key, query, days):
    body = get(client, "/trends" + query, key).get_json()
    assert body["days"] == days and len(body["points"]) == days


def test_trends_for_one_domain_count_only_its_reports(client, trended, key):
    point = get(client, "/trends?domain=example.org&days=2", key).get_json()["points"][0]
    assert (point["total_messages"], point["reports"]) == (5, 1)


def test_a_valid_domain_without_data_has_zero_points(client, trended, key):
    body = get(client, "/trends?domain=other.example&days=5", key).get_json()
    assert [p["total_messages"] for p in body["points"]] == [0] * 5
    assert body["points"][-1]["date"] == (TODAY - timedelta(days=1)).isoformat()


def test_an_invalid_domain_is_400(client, trended, key):
    assert_error(get(client, "/trends?domain=a..b", key), 400, "invalid_domain")


def test_trend_slices_answer_304_to_their_own_etag(client, trended, key):
    etag = get(client, "/trends?days=9", key).headers["ETag"]
    assert get(client, "/trends?days=9", key, **{"If-None-Match": etag}).status_code == 304
    assert get(client, "/trends?days=10", key, **{"If-None-Match": etag}).status_code == 200
