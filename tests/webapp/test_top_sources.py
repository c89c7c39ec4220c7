"""GET /top-sources: sending IPs by volume from the daily rollups; CSV download."""
from __future__ import annotations

import csv
import io

import pytest

from store.models import Source
from tests.factories import make_key, make_org, make_report
from tests.webapp.helpers import assert_error, get

FAIL = {"dkim": "fail", "spf": "fail"}


@pytest.fixture
def reports(org):
    make_report(org, "example.com", [
        {"source_ip": "192.0.2.1", "count": 10},
        {"source_ip": "192.0.2.2", "count": 4, "dkim": "pass", "spf": "fail"},
        {"source_ip": "=1+2", "count": 1, **FAIL}])
    make_report(org, "example.com", [{"source_ip": "192.0.2.2", "count": 3, **FAIL}])
    make_report(org, "other.example", [{"source_ip": "198.51.100.9", "count": 5, "dkim": "fail", "spf": "pass"}])
    make_report(make_org(), "example.com", [{"source_ip": "203.0.113.1", "count": 1000}])


def test_sources_are_listed_highest_volume_first_with_pass_and_fail(client, key, reports):
    body = get(client, "/top-sources", key).get_json()
    assert body == {"sources": [
        {"source_ip": "192.0.2.1", "count": 10, "pass": 10, "fail": 0, "spf_fail": 0, "dkim_fail": 0},
        {"source_ip": "192.0.2.2", "count": 7, "pass": 4, "fail": 3, "spf_fail": 7, "dkim_fail": 3},
        {"source_ip": "198.51.100.9", "count": 5, "pass": 5, "fail": 0, "spf_fail": 0, "dkim_fail": 5},
        {"source_ip": "=1+2", "count": 1, "pass": 0, "fail": 1, "spf_fail": 1, "dkim_fail": 1},
    ], "total": 4, "limit": 10, "offset": 0}


def test_an_empty_organization_has_an_empty_list_not_null(client, org, key):
    assert get(client, "/top-sources", key).get_json() == {"sources": [], "total": 0, "limit": 10, "offset": 0}


def test_the_default_page_is_ten_and_larger_limits_are_clamped(client, org, key):
    make_report(org, records=[{"source_ip": f"192.0.2.{n}", "count": n} for n in range(1, 13)])
    body = get(client, "/top-sources", key).get_json()
    assert (len(body["sources"]), body["total"], body["sources"][0]["source_ip"]) == (10, 12, "192.0.2.12")
    body = get(client, "/top-sources?limit=1000&offset=10", key).get_json()
    assert (len(body["sources"]), body["limit"], body["offset"]) == (2, 200, 10)


def test_domain_keeps_sources_of_exactly_that_domain(client, key, reports):
    body = get(client, "/top-sources?domain=other.example", key).get_json()
    assert [s["source_ip"] for s in body["sources"]] == ["198.51.100.9"]
    assert get(client, "/top-sources?domain=sub.other.example", key).get_json()["sources"] == []


@pytest.mark.parametrize("bad", ["", "nodot", "a_b.com"])
def test_an_invalid_domain_is_400_invalid_domain(client, org, key, bad):
    assert_error(get(client, "/top-sources?domain=" + bad, key), 400, "invalid_domain")


def test_a_recognised_sender_carries_its_service(client, org, key, reports):
    # Ingest wrote the source; enrichment (sources/jobs.py) recognised it.
    Source.update(service_name="Google Workspace", service_icon="google",
                  service_slug="google-workspace").where(Source.ip == "192.0.2.1").execute()
    first, second = get(client, "/top-sources", key).get_json()["sources"][:2]
    assert (first["service_name"], first["service_icon"], first["service_slug"]) == (
        "Google Workspace", "google", "google-workspace")
    assert "service_name" not in second


def test_format_csv_carries_ip_count_pass_and_fail_with_formulas_neutralized(client, key, reports):
    resp = get(client, "/top-sources?format=csv", key)
    assert resp.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert resp.headers["Content-Disposition"] == 'attachment; filename="top-sources.csv"'
    assert list(csv.reader(io.StringIO(resp.get_data(as_text=True)))) == [
        ["source_ip", "count", "pass", "fail"], ["192.0.2.1", "10", "10", "0"], ["192.0.2.2", "7", "4", "3"],
        ["198.51.100.9", "5", "5", "0"], ["'=1+2", "1", "0", "1"]]


def test_a_csv_page_of_top_sources_links_the_next(client, key, reports):
    resp = get(client, "/top-sources?format=csv&limit=3", key)
    assert resp.headers["X-Total-Count"] == "4"
    assert resp.headers["Link"] == ('<http://localhost/api/v1/top-sources?format=csv&limit=3'
                                    '&offset=3>; rel="next"')
    assert "Link" not in get(client, "/top-sources?format=csv", key).headers


def test_top_sources_need_analytics_read(client, org):
    _, plaintext = make_key(org, role="billing")
    assert_error(get(client, "/top-sources", plaintext), 403, "insufficient_permission",
                 required="analytics:read")


def test_top_sources_run_a_bounded_number_of_queries(client, key, reports, count_queries):
    get(client, "/top-sources?limit=2", key)
    before = count_queries.count
    get(client, "/top-sources?limit=2", key)
    assert count_queries.count - before <= 3


def test_a_report_stored_after_the_sources_were_remembered_is_counted(client, org, key):
    make_report(org, records=[{"source_ip": "192.0.2.1", "count": 2}])
    assert get(client, "/top-sources", key).get_json()["sources"][0]["count"] == 2
    make_report(org, records=[{"source_ip": "192.0.2.1", "count": 5}, {"source_ip": "192.0.2.9", "count": 1}])
    body = get(client, "/top-sources", key).get_json()
    assert [(s["source_ip"], s["count"]) for s in body["sources"]] == [("192.0.2.1", 7), ("192.0.2.9", 1)]
