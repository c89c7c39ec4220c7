"""GET /dashboard/overview: served from the stored blob, with validators, computed when missing."""
from datetime import timedelta

import orjson
import pytest

from snapshotter import jobs
from store import snapshots
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.snapshotter.slots import slots_held_elsewhere
from store.models import Organization, Snapshot
from tests.webapp.helpers import assert_error, get


def mark_dirty(org, moment):
    """Ingest marked the org dirty at `moment` (on the test clock, not the wall clock)."""
    Organization.update(dirty_since=moment).where(Organization.id == org.id).execute()


def test_overview_is_the_stored_blob_byte_for_byte_with_validators(client, org, key, clock):
    clock.now = NOW
    report_on(org, "example.com", TODAY, [{"count": 5}])
    jobs.refresh_org(org.id, NOW)
    stored = snapshots.get(org.id, "overview")
    resp = get(client, "/dashboard/overview", key)
    assert resp.status_code == 200 and resp.get_data() == stored.body
    assert resp.headers["ETag"] == f'"{stored.etag}"'
    assert resp.headers["Last-Modified"] == "Tue, 31 Mar 2026 12:00:00 GMT"
    assert resp.headers["Cache-Control"] == "private, no-cache"
    assert resp.headers["Vary"] == "Authorization"
    assert resp.mimetype == "application/json"


def test_if_none_match_with_the_current_etag_is_304_without_a_body(client, org, key, clock):
    clock.now = NOW
    jobs.refresh_org(org.id, NOW)
    etag = get(client, "/dashboard/overview", key).headers["ETag"]
    resp = get(client, "/dashboard/overview", key, **{"If-None-Match": etag})
    assert resp.status_code == 304 and resp.get_data() == b"" and resp.headers["ETag"] == etag
    assert get(client, "/dashboard/overview", key, **{"If-None-Match": '"other"'}).status_code == 200


def test_a_new_organization_gets_its_overview_computed_and_stored_on_first_request(client, org, key):
    assert snapshots.get(org.id, "overview") is None
    resp = get(client, "/dashboard/overview", key)
    assert resp.status_code == 200
    assert resp.get_json()["org_health"]["has_data"] is False
    assert resp.get_data() == snapshots.get(org.id, "overview").body


def test_a_fresh_blob_is_served_even_though_reports_arrived_since(client, org, key, clock):
    clock.now = NOW
    jobs.refresh_org(org.id, NOW)
    report_on(org, "example.com", TODAY, [{"count": 5}])
    mark_dirty(org, NOW + timedelta(minutes=1))
    clock.now = NOW + timedelta(minutes=3)
    assert get(client, "/dashboard/overview", key).get_json()["org_health"]["has_data"] is False


def test_a_stale_blob_is_recomputed_before_it_is_served(client, org, key, clock):
    clock.now = NOW
    jobs.refresh_org(org.id, NOW)
    report_on(org, "example.com", TODAY, [{"count": 5}])
    mark_dirty(org, NOW + timedelta(minutes=1))
    clock.now = NOW + timedelta(minutes=30)
    body = get(client, "/dashboard/overview", key).get_json()
    assert body["org_health"]["has_data"] is True and body["org_health"]["total_messages"] == 5


def test_computing_over_the_plans_cap_is_503_busy_with_retry_after(client, org, key, config):
    with slots_held_elsewhere(org, 4, config.lock_dir) as numbers:
        assert numbers == [0, 1, 2, 3]     # the team plan's four slots, all held
        resp = get(client, "/dashboard/overview", key)
        assert_error(resp, 503, "busy")
        assert resp.headers["Retry-After"] == "1"
    assert get(client, "/dashboard/overview", key).status_code == 200


def test_a_free_slot_under_the_cap_computes(client, org, key, config):
    with slots_held_elsewhere(org, 3, config.lock_dir):
        assert get(client, "/dashboard/overview", key).status_code == 200


def test_serving_a_stored_blob_takes_no_slot(client, org, key, config, clock):
    clock.now = NOW
    jobs.refresh_org(org.id, NOW)
    with slots_held_elsewhere(org, 4, config.lock_dir):
        assert get(client, "/dashboard/overview", key).status_code == 200


def test_head_is_answered_like_get_without_a_body(client, org, key):
    resp = client.head("/api/v1/dashboard/overview", headers={"Authorization": f"Bearer {key}"})
    assert resp.status_code == 200 and resp.get_data() == b"" and resp.headers["ETag"]


def test_overview_needs_analytics_read(client, org):
    from tests.factories import make_key
    billing = make_key(org, role="billing")[1]
    assert_error(get(client, "/dashboard/overview", billing), 403, "insufficient_permission",
                 required="analytics:read")
    assert orjson.loads(get(client, "/dashboard/overview").get_data())["code"] == "missing_key"


def test_if_modified_since_the_last_modified_is_304(client, org, key, clock):
    clock.now = NOW
    jobs.refresh_org(org.id, NOW)
    plain = get(client, "/dashboard/overview", key)
    assert plain.status_code == 200
    since = {"If-Modified-Since": plain.headers["Last-Modified"]}
    resp = get(client, "/dashboard/overview", key, **since)
    assert resp.status_code == 304 and resp.get_data() == b""
    assert get(client, "/dashboard/overview", key,
               **{"If-Modified-Since": "Mon, 30 Mar 2026 12:00:00 GMT"}).status_code == 200


def test_a_blob_replaced_by_another_process_is_served_on_the_next_request(client, org, key, clock, config):
    """Blobs are held between requests only while nobody writes to the store."""
    import sqlite3
    if not config.is_sqlite:
        pytest.skip("Postgres reads the blob on every request")
    clock.now = NOW
    jobs.refresh_org(org.id, NOW)
    first = get(client, "/dashboard/overview", key)
    other = sqlite3.connect(config.database_url[len("sqlite:///"):], isolation_level=None)
    other.execute("UPDATE snapshot SET body = ?, etag = 'e2' WHERE org_id = ? AND kind = 'overview'",
                  (b'{"replaced": true}', org.id))
    other.close()
    second = get(client, "/dashboard/overview", key)
    assert first.get_data() != b'{"replaced": true}'
    assert second.get_data() == b'{"replaced": true}' and second.headers["ETag"] == '"e2"'


def test_over_the_cap_a_snapshot_of_an_older_shape_is_503_busy_not_served(client, org, key,
                                                                           config, clock):
    clock.now = NOW
    jobs.refresh_org(org.id, NOW)
    Snapshot.update(shape="").where(Snapshot.org == org.id, Snapshot.kind == "overview").execute()
    with slots_held_elsewhere(org, 4, config.lock_dir):
        assert_error(get(client, "/dashboard/overview", key), 503, "busy")
    assert get(client, "/dashboard/overview", key).status_code == 200


def test_a_snapshot_of_an_older_shape_is_computed_again_with_every_field(client, org, key, clock):
    clock.now = NOW
    report_on(org, "example.com", TODAY, [{"count": 5}])
    jobs.refresh_org(org.id, NOW)
    body = orjson.loads(snapshots.get(org.id, "overview").body)
    del body["org_health"]["forwarded_messages"]          # as a release before the field left it
    (Snapshot.update(body=orjson.dumps(body), shape="")
     .where(Snapshot.org == org.id, Snapshot.kind == "overview").execute())
    served = get(client, "/dashboard/overview", key).get_json()
    assert served["org_health"]["forwarded_messages"] == 0
    assert served["org_health"]["total_messages"] == 5
