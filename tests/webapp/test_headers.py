"""Every answer says nosniff; keyed answers that are not snapshots say no-store."""
import pytest

from snapshotter import jobs
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.webapp.helpers import get

SNAPSHOTS = ["/dashboard/overview", "/compliance-score", "/compliance-score?domain=example.com",
             "/compliance-score/history", "/trends", "/trends?domain=example.com",
             "/domains/example.com/health"]
KEYED = ["/reports", "/reports?format=csv", "/reports?format=json", "/reports/date-range",
         "/reports/{id}", "/statistics", "/top-sources", "/sources", "/sources/192.0.2.1",
         "/events", "/domains", "/enums", "/api-keys/usage"]


@pytest.fixture
def stored(org, clock):
    clock.now = NOW
    report = report_on(org, "example.com", TODAY, [{"count": 5}])
    jobs.refresh_org(org.id, NOW)
    return report


@pytest.mark.parametrize("path", SNAPSHOTS)
def test_a_snapshot_answer_keeps_private_no_cache_and_says_nosniff(client, stored, key, path):
    resp = get(client, path, key)
    assert resp.status_code == 200
    assert resp.headers["Cache-Control"] == "private, no-cache"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    again = get(client, path, key, **{"If-None-Match": resp.headers["ETag"]})
    assert again.status_code == 304 and again.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("path", KEYED)
def test_a_keyed_answer_that_is_no_snapshot_is_no_store(client, stored, key, path):
    resp = get(client, path.replace("{id}", stored.id), key)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("path, status", [("/reports", 401), ("/no-such-route", 404),
                                          ("/reports/not-an-id", 400)])
def test_errors_are_no_store_and_nosniff(client, stored, key, path, status):
    resp = get(client, path, None if status == 401 else key)
    assert resp.status_code == status
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_a_method_not_allowed_says_nosniff(client, stored, key):
    resp = client.post("/api/v1/reports", headers={"Authorization": f"Bearer {key}"})
    assert resp.status_code == 405 and resp.headers["X-Content-Type-Options"] == "nosniff"


def test_the_public_documents_keep_their_own_caching_and_say_nosniff(client):
    resp = client.get("/api/v1/openapi.json")
    assert resp.status_code == 200 and resp.headers["Cache-Control"] == "public, max-age=3600"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
