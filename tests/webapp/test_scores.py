"""GET /compliance-score and /compliance-score/history from stored snapshots."""
from datetime import timedelta

import pytest

from snapshotter import jobs
from store import snapshots
from tests.factories import make_domain
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.webapp.helpers import assert_error, get


@pytest.fixture
def scored_org(org, clock):
    clock.now = NOW
    report_on(org, "example.com", TODAY, [{"count": 9}, {"count": 1, "dkim": "fail", "spf": "fail"}],
              p="reject")
    report_on(org, "example.org", TODAY - timedelta(days=40), [{"count": 3}])
    jobs.refresh_org(org.id, NOW)
    return org


def test_compliance_score_is_the_stored_organization_blob(client, scored_org, key):
    resp = get(client, "/compliance-score", key)
    assert resp.get_data() == snapshots.get(scored_org.id, "compliance").body
    body = resp.get_json()
    assert body["compliance_rate"] == 90.0 and body["total_messages"] == 10
    assert [d["domain"] for d in body["domain_scores"]] == ["example.com", "example.org"]


def test_compliance_score_for_one_domain_uses_its_own_blob_and_normal_form(client, scored_org, key):
    resp = get(client, "/compliance-score?domain=EXAMPLE.com.", key)
    assert resp.get_data() == snapshots.get(scored_org.id, "compliance", "example.com").body
    assert resp.get_json()["domain_scores"][0]["score"] == resp.get_json()["overall_score"]


def test_a_valid_domain_without_data_gets_zeros_not_404(client, scored_org, key):
    body = get(client, "/compliance-score?domain=unknown.example", key).get_json()
    assert body["grade"] == "N/A" and body["total_messages"] == 0
    assert body["domain_scores"][0]["domain"] == "unknown.example"
    assert snapshots.get(scored_org.id, "compliance", "unknown.example") is None


def test_a_domain_added_after_the_last_refresh_is_computed_on_request(client, scored_org, key):
    make_domain(scored_org, "new.example")
    assert get(client, "/compliance-score?domain=new.example", key).status_code == 200
    assert snapshots.get(scored_org.id, "compliance", "new.example") is not None


@pytest.mark.parametrize("value", ["not a domain", "-x.example", "example", "1.2.3.4"])
def test_an_invalid_domain_is_400_invalid_domain(client, scored_org, key, value):
    assert_error(get(client, f"/compliance-score?domain={value}", key), 400, "invalid_domain")


def test_history_has_a_point_per_day_with_a_snapshot_inside_the_days_asked(client, scored_org, key):
    body = get(client, "/compliance-score/history", key).get_json()
    assert body["days"] == 30
    assert [p["snapshot_date"] for p in body["points"]] == [TODAY.isoformat()]
    full = get(client, "/compliance-score/history?days=60", key).get_json()
    assert [p["snapshot_date"] for p in full["points"]] == [
        (TODAY - timedelta(days=40)).isoformat(), TODAY.isoformat()]
    point = full["points"][-1]
    assert set(point) == {"snapshot_date", "score", "grade", "compliance_rate", "spf_rate",
                          "dkim_rate", "total_messages"}


@pytest.mark.parametrize("value", ["0", "366", "-1", "abc", "3.5", ""])
def test_history_days_out_of_range_fall_back_to_30(client, scored_org, key, value):
    resp = get(client, f"/compliance-score/history?days={value}", key)
    assert resp.status_code == 200 and resp.get_json()["days"] == 30


def test_history_slices_carry_their_own_etag_and_304(client, scored_org, key):
    first = get(client, "/compliance-score/history?days=7", key)
    other = get(client, "/compliance-score/history?days=8", key)
    assert first.headers["ETag"] != other.headers["ETag"]
    again = get(client, "/compliance-score/history?days=7", key, **{"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
