"""Each page shows the API's numbers for the same key, with its role's limits, its metering
and the CSP; the in-app links events and action items carry resolve to pages."""
from __future__ import annotations

import pytest

from store.models import Usage
from tests.factories import make_key, make_tls_report
from tests.webapp.helpers import assert_error, get
from tests.webapp.pages.conftest import api_numbers, assert_same_numbers, sign_in


def page_and_api(client, key, page_path: str, api_path: str):
    html = client.get(page_path)
    assert html.status_code == 200, html.data[:2000]
    return html.get_data(as_text=True), get(client, api_path, key).get_json()


@pytest.mark.parametrize("page_path, api_path", [
    ("/", "/dashboard/overview"),
    ("/domains/example.com", "/domains/example.com/health"),
    ("/reports", "/reports"),
    ("/reports?sort_by=total_messages&sort_dir=asc&limit=1", "/reports?sort_by=total_messages&sort_dir=asc&limit=1"),
    ("/sources", "/sources"),
    ("/sources?domain=example.com&has_failures=true", "/sources?domain=example.com&has_failures=true"),
    ("/sources/198.51.100.7", "/sources/198.51.100.7"),
    ("/events", "/events"),
    ("/usage", "/api-keys/usage"),
])
def test_a_page_shows_the_apis_numbers_for_the_same_key(signed_in, monitored, key, page_path,
                                                        api_path):
    html, body = page_and_api(signed_in, key, page_path, api_path)
    assert_same_numbers(html, body, ask=lambda path: get(signed_in, path, key).get_json())


def test_the_domain_page_says_how_much_rests_on_verified_reports(signed_in, monitored, key):
    html, body = page_and_api(signed_in, key, "/domains/example.com",
                              "/domains/example.com/health")
    assert "From verified reports" in html
    assert ("verified_rate", str(body["verified_rate"]), "") in api_numbers(html)


def test_the_tls_reports_page_shows_the_apis_numbers(signed_in, monitored, key):
    make_tls_report(monitored)
    html, body = page_and_api(signed_in, key, "/tls-reports", "/tls-reports")
    assert_same_numbers(html, body, at_least=3)


def test_a_report_page_shows_its_records(signed_in, monitored, key):
    report_id = get(signed_in, "/reports", key).get_json()["reports"][0]["id"]
    html, body = page_and_api(signed_in, key, f"/reports/{report_id}", f"/reports/{report_id}")
    assert_same_numbers(html, body, at_least=4)
    assert "198.51.100.7" in html


def test_a_download_link_on_a_page_is_the_apis_download(signed_in, monitored, key):
    page = signed_in.get("/reports?format=csv")
    assert page.mimetype == "text/csv" and page.data == get(signed_in, "/reports?format=csv", key).data


def test_the_links_events_and_action_items_carry_resolve_to_pages(signed_in, monitored):
    resp = signed_in.get("/domains/example.com/health")
    assert resp.status_code == 302 and resp.headers["Location"] == "/domains/example.com"
    dns = signed_in.get("/domains/example.com/dns?record=dmarc")
    assert dns.status_code == 200 and b"<h2 id=\"kind-dmarc\">DMARC</h2>" in dns.data
    assert b"kind-spf" not in dns.data
    assert signed_in.get("/sources/198.51.100.7").status_code == 200
    assert signed_in.get("/sources?domain=example.com").status_code == 200


def test_every_page_carries_a_strict_policy_and_is_not_cached(signed_in, monitored):
    for path in ("/", "/domains/example.com", "/reports", "/sources", "/events", "/usage",
                 "/tls-reports", "/sign-in", "/domains/nowhere.example"):
        resp = signed_in.get(path)
        policy = resp.headers.get("Content-Security-Policy", "")
        assert "script-src 'none'" in policy and "default-src 'self'" in policy, path
        assert "unsafe-inline" not in policy
        assert resp.headers["Cache-Control"] == "no-store", path


def test_a_viewer_sees_no_reports_link_and_the_reports_page_says_why(client, monitored):
    viewer = make_key(monitored, role="viewer")[1]
    sign_in(client, viewer)
    overview = client.get("/")
    assert overview.status_code == 200 and b'href="/reports"' not in overview.data
    refused = client.get("/reports")
    assert refused.status_code == 403 and b"does not allow this page" in refused.data
    assert b"report:read" in refused.data


def test_an_unknown_domain_is_the_apis_404_as_a_page(signed_in, monitored):
    resp = signed_in.get("/domains/unknown.example")
    assert resp.status_code == 404 and resp.mimetype == "text/html"
    assert b"does not monitor this domain" in resp.data
    assert signed_in.get("/reports/not-an-id").status_code == 400


def test_each_page_view_counts_once_as_the_route_it_mirrors(signed_in, monitored):
    signed_in.get("/")
    before = sum(row.allowed for row in Usage.select().where(Usage.key_id != ""))
    signed_in.get("/")
    signed_in.get("/domains/example.com")
    signed_in.get("/usage")                     # as /api-keys/usage: not counted
    signed_in.get("/assets/site.css")           # static files: never
    after = Usage.select().where(Usage.key_id != "")
    assert sum(row.allowed for row in after) == before + 2
    assert sum(row.heavy for row in Usage.select().where(Usage.key_id == "")) == 1


def test_a_refusal_says_when_to_come_back(signed_in, monitored, clock):
    signed_in.get("/")
    Usage.update(allowed=10**6).execute()       # the organization's hour is spent
    resp = signed_in.get("/")
    assert resp.status_code == 429 and "Retry-After" in resp.headers
    assert b"Come back at" in resp.data and b"quota_exceeded" in resp.data


def test_the_stylesheet_is_served_without_a_session(client, org):
    resp = client.get("/assets/site.css")
    assert resp.status_code == 200 and resp.mimetype == "text/css" and resp.headers["ETag"]
    assert client.get("/assets/other.css").status_code == 404


def test_a_page_stays_small(signed_in, monitored):
    import gzip
    for path in ("/", "/domains/example.com?days=365", "/reports", "/sources"):
        assert len(gzip.compress(signed_in.get(path).data)) < 150_000


BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def test_an_unknown_path_outside_the_api_is_a_not_found_page_for_a_browser(client, org):
    resp = client.get("/domainz", headers=BROWSER)
    assert resp.status_code == 404 and resp.mimetype == "text/html"
    assert b"There is no page at this address." in resp.data
    assert resp.headers["Content-Security-Policy"].startswith("default-src 'self'")


@pytest.mark.parametrize("path, headers", [("/api/v1/nope", BROWSER), ("/api/v2/enums", BROWSER),
                                           ("/domainz", {"Accept": "*/*"}), ("/domainz", {})])
def test_an_unknown_path_beside_the_api_or_asked_by_a_program_is_the_apis_404(client, org, path,
                                                                               headers):
    assert_error(client.get(path, headers=headers), 404, "route_not_found")
