"""GET /domains/{domain}/health: the stored health blob of a monitored domain."""
import pytest

from snapshotter import jobs
from store import snapshots
from tests.factories import make_domain, make_key
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.webapp.helpers import assert_error, get


@pytest.fixture
def monitored(org, clock):
    clock.now = NOW
    report_on(org, "example.com", TODAY, [{"count": 8}, {"source_ip": "198.51.100.7", "count": 2,
                                                         "dkim": "fail", "spf": "fail"}], p="reject")
    jobs.refresh_org(org.id, NOW)
    return org


def test_health_is_the_stored_blob_of_the_domain(client, monitored, key):
    resp = get(client, "/domains/example.com/health", key)
    assert resp.status_code == 200
    assert resp.get_data() == snapshots.get(monitored.id, "health", "example.com").body
    body = resp.get_json()
    assert body["domain"] == "example.com" and body["total_messages"] == 10
    assert body["compliance"]["rate"] == 80.0 and body["computed_at"] == "2026-03-31T12:00:00Z"
    assert [s["ip"] for s in body["top_senders"]] == ["192.0.2.1", "198.51.100.7"]
    assert body["dns"]["dmarc"]["status"] == "unknown"
    assert body["empty_state"]["healthy"] is False


def test_health_takes_the_domain_in_any_case(client, monitored, key):
    assert get(client, "/domains/Example.COM/health", key).get_json()["domain"] == "example.com"


def test_a_domain_not_monitored_is_404_domain_not_monitored(client, monitored, key):
    assert_error(get(client, "/domains/other.example/health", key), 404, "domain_not_monitored")


def test_an_invalid_domain_is_400_invalid_domain(client, monitored, key):
    assert_error(get(client, "/domains/not_a_domain/health", key), 400, "invalid_domain")


def test_a_domain_added_since_the_last_refresh_is_computed_on_request(client, monitored, key):
    make_domain(monitored, "new.example")
    body = get(client, "/domains/new.example/health", key).get_json()
    assert body["grade"] == "N/A" and body["last_report_date"] is None


def test_health_needs_domain_read(client, monitored):
    billing = make_key(monitored, role="billing")[1]
    assert_error(get(client, "/domains/example.com/health", billing), 403,
                 "insufficient_permission", required="domain:read")



def test_a_domain_removed_since_the_last_refresh_is_no_longer_monitored(client, monitored, key):
    from store.models import Domain
    assert get(client, "/domains/example.com/health", key).status_code == 200
    Domain.delete().where(Domain.name == "example.com").execute()
    assert_error(get(client, "/domains/example.com/health", key), 404, "domain_not_monitored")


def test_a_domain_removed_by_another_process_is_no_longer_monitored_on_the_next_request(
        client, monitored, key, config):
    if not config.is_sqlite:
        pytest.skip("Postgres asks on every request")
    import sqlite3
    assert get(client, "/domains/example.com/health", key).status_code == 200
    other = sqlite3.connect(config.database_url[len("sqlite:///"):], isolation_level=None)
    other.execute("DELETE FROM domain WHERE name = 'example.com'")
    other.close()
    assert_error(get(client, "/domains/example.com/health", key), 404, "domain_not_monitored")
