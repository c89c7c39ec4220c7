"""The snapshot routes as a client sees them, answered with the snapshot fast path and by Flask alone:
every test runs both ways, so the fast path must answer (status, body, headers, counts) exactly as
Flask does. One test checks that the fast path does answer: Flask's request_started signal, which
the fast path's own answers never fire.
"""
from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import flask
import pytest

from snapshotter import jobs
from store import keys, snapshots, usage
from store.clock import to_epoch
from store.encoding import dumps
from store.models import ApiKey, Snapshot
from store.plans import PLANS
from tests.factories import make_key, make_org, make_usage
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.webapp.helpers import assert_error, get
from webapp import snapshot_fast_path
from webapp.request_log import RequestLog

HOUR = to_epoch(NOW)                  # NOW is on the hour: an hour's whole 3600 s are left
OVERVIEW, COMPLIANCE = "/dashboard/overview", "/compliance-score"
HEALTH = "/domains/example.com/health"
LIMITS = {"free": (1000, 60), "team": (10000, 600)}
SAME = ("ETag", "Last-Modified", "Cache-Control", "Vary", "Content-Type", "Content-Length",
        "X-Content-Type-Options")
QUOTA = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy",
         "RateLimit")


@pytest.fixture(autouse=True)
def _sqlite_only(config):
    if not config.is_sqlite:
        pytest.skip("on Postgres nothing is known, so every request takes the Flask path")


@pytest.fixture(autouse=True, params=["with the fast path", "Flask alone"])
def fast_path(request, app):
    """Each test runs as deployed and again with the fast path taken out."""
    if request.param == "Flask alone":
        app.wsgi_app = RequestLog(app.wsgi_app.app.flask_wsgi)
    return request.param


@pytest.fixture
def flask_handled(app):
    """The environ of every request Flask handled, in order."""
    handled = []

    def receiver(sender, **extra):
        handled.append(flask.request.environ)
    flask.request_started.connect(receiver, app)
    yield handled
    flask.request_started.disconnect(receiver, app)


@pytest.fixture
def plan():
    return "team"


@pytest.fixture
def stored(app, clock, plan):
    """An organization of the plan with a report on example.com and its snapshots stored at NOW."""
    clock.now = NOW
    org = make_org(plan=plan)
    report_on(org, "example.com", TODAY, [{"count": 8}, {"source_ip": "198.51.100.7", "count": 2,
                                                         "dkim": "fail", "spf": "fail"}])
    jobs.refresh_org(org.id, NOW)
    return org


def used_key(org, role="owner", **fields):
    """A key last used this minute: its next request writes nothing to the store (a first use
    records last_used_at, a write that forgets everything known)."""
    return make_key(org, role=role, last_used_at=NOW, **fields)


@pytest.fixture
def fast_path_key(stored):
    return used_key(stored)[1]


def quota_fields(plan, used, heavy_used=None):
    """The quota headers of a capped plan after `used` requests (heavy_used: the heavy route)."""
    hourly, heavy = LIMITS[plan]
    left = max(hourly - used, 0)
    policy, state = [f'"hourly";q={hourly};w=3600'], [f'"hourly";r={left};t=3600']
    if heavy_used is not None:
        policy.append(f'"heavy";q={heavy};w=3600')
        state.append(f'"heavy";r={max(heavy - heavy_used, 0)};t=3600')
    return {"X-RateLimit-Limit": str(hourly), "X-RateLimit-Remaining": str(left),
            "X-RateLimit-Reset": str(HOUR + 3600), "RateLimit-Policy": ", ".join(policy),
            "RateLimit": ", ".join(state)}


def quota_of(resp):
    return {name: resp.headers.get(name) for name in QUOTA}


def other_connection(config):
    """A connection of another process's kind to the store's file."""
    return sqlite3.connect(config.database_url[len("sqlite:///"):], isolation_level=None)


@pytest.mark.parametrize("plan", ["free", "team"])
@pytest.mark.parametrize("path, heavy", [(OVERVIEW, False), (COMPLIANCE, False), (HEALTH, True)])
def test_a_second_request_for_a_snapshot_is_answered_as_the_first_with_its_own_count(
        client, fast_path_key, plan, path, heavy):
    by_flask = get(client, path, fast_path_key)
    by_fast_path = get(client, path, fast_path_key)
    assert (by_flask.status_code, by_fast_path.status_code) == (200, 200)
    assert by_fast_path.get_data() == by_flask.get_data() and len(by_fast_path.get_data()) > 0
    assert sorted(by_fast_path.headers.keys()) == sorted(by_flask.headers.keys())
    assert {h: by_fast_path.headers[h] for h in SAME} == {h: by_flask.headers[h] for h in SAME}
    assert quota_of(by_flask) == quota_fields(plan, 1, 1 if heavy else None)
    assert quota_of(by_fast_path) == quota_fields(plan, 2, 2 if heavy else None)


def test_the_lane_answers_a_stored_fresh_snapshot_without_flask(
        client, fast_path_key, flask_handled, fast_path):
    if fast_path == "Flask alone":
        pytest.skip("nothing answers below Flask")
    assert [get(client, OVERVIEW, fast_path_key).status_code for _ in range(3)] == [200] * 3
    assert flask_handled == []


def test_a_snapshot_not_stored_yet_is_computed_once_and_then_served(
        client, clock, flask_handled, fast_path):
    clock.now = NOW
    org = make_org(plan="team")
    report_on(org, "example.com", TODAY, [{"count": 8}])
    _, key = used_key(org)
    responses = [get(client, OVERVIEW, key) for _ in range(3)]
    assert [r.status_code for r in responses] == [200] * 3
    assert len({r.get_data() for r in responses}) == 1
    assert snapshots.get(org.id, "overview", "") is not None
    assert usage.hour_counts(org.id, HOUR) == (3, 0, 0)
    # Flask computes it; after that write the fast path serves it (Flask alone: all three).
    assert len(flask_handled) == (1 if fast_path == "with the fast path" else 3)


def test_a_key_used_for_the_first_time_records_its_use_and_is_answered(client, stored):
    row, plaintext = make_key(stored, role="owner")
    responses = [get(client, OVERVIEW, plaintext) for _ in range(2)]
    assert [r.status_code for r in responses] == [200, 200]
    assert responses[0].get_data() == responses[1].get_data()
    assert ApiKey.get_by_id(row.id).last_used_at == NOW
    assert usage.hour_counts(stored.id, HOUR) == (2, 0, 0)


def test_an_uncapped_plan_gets_no_quota_headers_on_a_second_request(client, clock):
    clock.now = NOW
    org = make_org(plan="unlimited")
    jobs.refresh_org(org.id, NOW)
    _, key = used_key(org)
    by_flask, by_fast_path = get(client, OVERVIEW, key), get(client, OVERVIEW, key)
    assert by_fast_path.status_code == 200
    every = sorted(SAME + ("X-Request-Id",))
    assert sorted(by_fast_path.headers.keys()) == sorted(by_flask.headers.keys()) == every
    assert usage.hour_counts(org.id, HOUR) == (2, 0, 0)


def test_requests_mixing_snapshot_routes_and_others_are_each_counted_once(
        client, stored, fast_path_key):
    paths = [OVERVIEW, OVERVIEW, "/enums", OVERVIEW, HEALTH, HEALTH, COMPLIANCE, COMPLIANCE,
             f"{COMPLIANCE}?domain=example.com", OVERVIEW, HEALTH]
    remaining = [int(get(client, p, fast_path_key).headers["X-RateLimit-Remaining"]) for p in paths]
    assert remaining == list(range(9999, 9999 - len(paths), -1))
    assert usage.hour_counts(stored.id, HOUR) == (len(paths), 0, 3)


def test_repeated_snapshot_requests_are_counted_for_their_key(client, stored):
    (first, first_key), (second, second_key) = used_key(stored), used_key(stored)
    for _ in range(3):
        get(client, OVERVIEW, first_key)
    get(client, OVERVIEW, second_key)
    counts = usage.per_key(stored.id, HOUR, HOUR)
    assert {k: v[:2] for k, v in counts.items()} == {first.id: (3, 0), second.id: (1, 0)}


def test_a_head_request_is_answered_without_a_body(client, fast_path_key):
    body = get(client, OVERVIEW, fast_path_key).get_data()
    resp = client.head("/api/v1" + OVERVIEW, headers={"Authorization": f"Bearer {fast_path_key}"})
    assert resp.status_code == 200 and resp.get_data() == b""
    assert resp.headers["Content-Length"] == str(len(body))
    assert resp.headers["X-RateLimit-Remaining"] == "9998"


@pytest.mark.parametrize("path, query, kind, variant", [
    (COMPLIANCE, "?domain=example.com", "compliance", "example.com"),
    (OVERVIEW, "?fresh=1", "overview", "")])
def test_a_request_with_a_query_string_gets_its_variant(
        client, stored, fast_path_key, path, query, kind, variant):
    assert [get(client, path, fast_path_key).status_code for _ in range(2)] == [200, 200]
    resp = get(client, path + query, fast_path_key)
    assert resp.status_code == 200
    assert resp.get_data() == snapshots.get(stored.id, kind, variant).body


def test_if_none_match_is_304_with_the_current_etag(
        client, fast_path_key):
    etag = get(client, OVERVIEW, fast_path_key).headers["ETag"]
    resp = get(client, OVERVIEW, fast_path_key, **{"If-None-Match": etag})
    assert (resp.status_code, resp.get_data(), resp.headers["ETag"]) == (304, b"", etag)


def test_a_post_is_405(client, fast_path_key):
    get(client, OVERVIEW, fast_path_key)
    resp = client.post("/api/v1" + OVERVIEW, headers={"Authorization": f"Bearer {fast_path_key}"})
    assert (resp.status_code, resp.headers["Allow"]) == (405, "GET, HEAD")


@pytest.mark.parametrize("header, code", [
    (f"Bearer {keys.new_key()}", "invalid_key"), ("Bearer not-a-key", "malformed_key"),
    (None, "missing_key")], ids=["unknown", "malformed", "missing"])
def test_an_unknown_malformed_or_missing_key_is_401_unmetered(
        client, stored, fast_path_key, header, code):
    get(client, OVERVIEW, fast_path_key)
    headers = {} if header is None else {"Authorization": header}
    responses = [client.get("/api/v1" + OVERVIEW, headers=headers) for _ in range(2)]
    for resp in responses:
        assert_error(resp, 401, code)
    assert usage.hour_counts(stored.id, HOUR) == (1, 0, 0)


def _revoke_here(row, config):
    ApiKey.update(revoked_at=NOW).where(ApiKey.id == row.id).execute()


def _revoke_elsewhere(row, config):
    other = other_connection(config)
    other.execute("UPDATE api_key SET revoked_at = ? WHERE id = ?", (str(NOW), row.id))
    other.close()


@pytest.mark.parametrize("revoke", [_revoke_here, _revoke_elsewhere])
def test_a_key_revoked_after_two_answers_is_401_key_revoked(
        client, stored, config, revoke):
    row, plaintext = used_key(stored)
    assert [get(client, OVERVIEW, plaintext).status_code for _ in range(2)] == [200, 200]
    revoke(row, config)
    assert_error(get(client, OVERVIEW, plaintext), 401, "key_revoked")


def test_a_known_key_that_has_expired_since_is_401_key_expired(
        client, stored, clock):
    _, plaintext = used_key(stored, expires_at=NOW + timedelta(seconds=30))
    assert [get(client, OVERVIEW, plaintext).status_code for _ in range(2)] == [200, 200]
    clock.now = NOW + timedelta(seconds=30)
    assert_error(get(client, OVERVIEW, plaintext), 401, "key_expired")


@pytest.mark.parametrize("path, required", [(OVERVIEW, "analytics:read"), (HEALTH, "domain:read")])
def test_a_key_whose_role_lacks_the_permission_is_403_and_metered_once(
        client, stored, fast_path_key, path, required):
    billing_row, billing = used_key(stored, role="billing")     # a write: made before the rest
    get(client, path, fast_path_key)
    get(client, path, fast_path_key)                 # the fast path knows the snapshot
    for _ in range(2):                          # the second time the fast path holds the key too
        assert_error(get(client, path, billing), 403, "insufficient_permission", required=required)
    assert usage.per_key(stored.id, HOUR, HOUR)[billing_row.id][:2] == (2, 0)
    assert usage.hour_counts(stored.id, HOUR)[:2] == (4, 0)


def test_a_health_domain_not_in_its_normal_form_gets_the_same_answer(client, fast_path_key):
    body = get(client, HEALTH, fast_path_key).get_data()
    get(client, HEALTH, fast_path_key)
    resp = get(client, "/domains/Example.COM/health", fast_path_key)
    assert resp.status_code == 200 and resp.get_data() == body


def test_an_unmonitored_domain_is_404_domain_not_monitored(
        client, stored, fast_path_key):
    get(client, HEALTH, fast_path_key)
    for _ in range(2):
        assert_error(get(client, "/domains/other.example/health", fast_path_key), 404,
                     "domain_not_monitored")
    assert usage.hour_counts(stored.id, HOUR) == (3, 0, 3)


def test_a_domain_removed_by_another_writer_is_404_on_the_next_request(
        client, stored, fast_path_key, config):
    assert [get(client, HEALTH, fast_path_key).status_code for _ in range(2)] == [200, 200]
    other = other_connection(config)
    other.execute("DELETE FROM domain WHERE name = 'example.com'")
    other.close()
    assert_error(get(client, HEALTH, fast_path_key), 404, "domain_not_monitored")


@pytest.mark.parametrize("plan", ["free"])
@pytest.mark.parametrize("path, spent, counts, remaining, rate_limit", [
    (OVERVIEW, {"allowed": 998}, (1000, 1, 0), "0", '"hourly";r=0;t=3600'),
    (HEALTH, {"allowed": 100, "heavy": 58}, (102, 1, 60), "898",
     '"hourly";r=898;t=3600, "heavy";r=0;t=3600')])
def test_a_snapshot_request_the_quota_refuses_is_429_counted_once(
        client, stored, fast_path_key, path, spent, counts, remaining, rate_limit):
    make_usage(stored, hour=HOUR, **spent)
    assert [get(client, path, fast_path_key).status_code for _ in range(2)] == [200, 200]
    refused = get(client, path, fast_path_key)
    assert_error(refused, 429, "quota_exceeded")
    assert refused.headers["Retry-After"] == "3600"
    assert refused.headers["RateLimit"] == rate_limit
    assert refused.headers["X-RateLimit-Remaining"] == remaining
    assert usage.hour_counts(stored.id, HOUR) == counts


def test_an_abuse_refusal_of_a_snapshot_request_is_429_rate_limited_counted_once(
        client, stored, fast_path_key):
    assert {get(client, OVERVIEW, fast_path_key).status_code for _ in range(50)} == {200}
    refused = get(client, OVERVIEW, fast_path_key)
    assert_error(refused, 429, "rate_limited")
    assert refused.headers["Retry-After"] == "10"
    assert refused.headers["X-RateLimit-Remaining"] == "9950"
    assert usage.hour_counts(stored.id, HOUR) == (50, 1, 0)


def _refresh_here(org, config):
    report_on(org, "example.com", TODAY, [{"count": 40}])
    jobs.refresh_org(org.id, NOW)


def _replace_elsewhere(org, config):
    other = other_connection(config)
    other.execute("UPDATE snapshot SET body = ?, etag = 'e2' "
                  "WHERE org_id = ? AND kind = 'overview'", (b'{"replaced": true}', org.id))
    other.close()


@pytest.mark.parametrize("replace", [_refresh_here, _replace_elsewhere])
def test_a_snapshot_replaced_by_another_writer_is_not_served_stale(
        client, stored, fast_path_key, config, replace):
    old = [get(client, OVERVIEW, fast_path_key) for _ in range(2)]
    replace(stored, config)
    new = [get(client, OVERVIEW, fast_path_key) for _ in range(2)]
    assert old[0].headers["ETag"] == old[1].headers["ETag"] != new[0].headers["ETag"]
    assert new[0].headers["ETag"] == new[1].headers["ETag"]
    assert new[1].get_data() == new[0].get_data() != old[1].get_data()


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["free"])
def test_storage_failing_after_a_snapshot_request_was_counted_is_503_and_counted_once(
        client, stored, fast_path_key, config):
    # 3 requests on top of 897: the third crosses into near_cap and writes its event, which
    # waits for a store held by another writer (ingest, the snapshotter) past the busy timeout.
    make_usage(stored, hour=HOUR, allowed=897)
    assert [get(client, OVERVIEW, fast_path_key).status_code for _ in range(2)] == [200, 200]
    other = sqlite3.connect(config.database_url[len("sqlite:///"):], isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        resp = get(client, OVERVIEW, fast_path_key)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert_error(resp, 503, "storage_unavailable")
    assert usage.hour_counts(stored.id, HOUR)[0] == 900
    # Once the other writer is gone, the next request is answered and counted.
    assert get(client, OVERVIEW, fast_path_key).status_code == 200
    assert usage.hour_counts(stored.id, HOUR)[0] == 901


def test_a_plan_that_no_longer_resolves_is_503_plan_unavailable(
        client, fast_path_key, monkeypatch):
    assert [get(client, OVERVIEW, fast_path_key).status_code for _ in range(2)] == [200, 200]
    monkeypatch.delitem(PLANS, "team")        # no store write: what is known stays known
    assert_error(get(client, OVERVIEW, fast_path_key), 503, "plan_unavailable")


def test_a_storage_error_in_the_lane_before_metering_still_answers_counted_once(
        client, stored, fast_path_key, monkeypatch):
    get(client, OVERVIEW, fast_path_key)

    def failing(database):
        raise sqlite3.OperationalError("disk I/O error")
    monkeypatch.setattr(snapshot_fast_path, "data_version", failing)   # the fast path's read of the store
    resp = get(client, OVERVIEW, fast_path_key)
    assert resp.status_code == 200
    assert usage.hour_counts(stored.id, HOUR)[0] == 2


def test_a_snapshot_of_an_older_shape_is_recomputed_before_it_is_served(client, stored,
                                                                         flask_handled):
    """As an upgrade leaves it: a body without a field the document now promises, stored
    under another shape version ("" for blobs stored before shapes had versions)."""
    key = used_key(stored)[1]
    body = json.loads(snapshots.get(stored.id, "health", "example.com").body)
    del body["alert_count"]
    (Snapshot.update(body=dumps(body), shape="")
     .where(Snapshot.org == stored.id, Snapshot.kind == "health").execute())
    response = get(client, HEALTH, key)
    assert response.status_code == 200 and "alert_count" in response.get_json()
    assert len(flask_handled) == 1          # the lane left it to Flask, which recomputed it
    assert snapshots.get(stored.id, "health", "example.com").shape == jobs.SHAPE_VERSIONS["health"]
    assert get(client, HEALTH, key).get_data() == response.get_data()
