"""GET /sources and /sources/{ip}: totals kept by ingest, filters, sorts, detail and errors."""
from __future__ import annotations

import datetime as dt

import pytest

from store.addresses import search_text
from store.models import Source
from tests.factories import epoch, make_key, make_org, make_report
from tests.webapp.helpers import assert_error, get

FAIL = {"dkim": "fail", "spf": "fail"}
DAY = 86400
START = epoch("2024-03-01")


@pytest.fixture
def reports(org):
    make_report(org, "example.com", [
        {"source_ip": "192.0.2.1", "count": 10},
        {"source_ip": "192.0.2.2", "count": 4, "dkim": "pass", "spf": "fail"},
        {"source_ip": "2001:db8::1", "count": 1, **FAIL, "disposition": "reject"}],
        date_begin=START, date_end=START + DAY)
    make_report(org, "example.com", [{"source_ip": "192.0.2.2", "count": 3, **FAIL,
                                      "disposition": "quarantine"}],
                date_begin=START + DAY, date_end=START + 2 * DAY)
    make_report(org, "other.example", [{"source_ip": "10.0.0.9", "count": 5, "dkim": "fail"},
                                       {"source_ip": "192.0.2.2", "count": 2}],
                date_begin=START + 2 * DAY, date_end=START + 3 * DAY)
    make_report(make_org(), "example.com", [{"source_ip": "203.0.113.1", "count": 1000}])
    Source.update(service_name="Mailgun", service_slug="mailgun", service_icon="mailgun",
                  abuse_status="clean", ptr="o1.mailgun.net", country="US",
                  classification="authorized", authorized=True,
                  search_text=search_text("10.0.0.9", ["other.example"], "o1.mailgun.net",
                                          "Mailgun")).where(
        Source.ip == "10.0.0.9").execute()
    Source.update(abuse_status="malicious", blocklist={
        "status": "listed", "listed_on": ["zen.spamhaus.org"], "checked_at": "2024-03-05T00:00:00Z"}
    ).where(Source.ip == "2001:db8::1").execute()


def ips(client, key, query=""):
    body = get(client, f"/sources{query}", key).get_json()
    return [row["source_ip"] for row in body["sources"]]


def test_a_row_holds_the_totals_of_every_report_and_what_enrichment_knows(client, key, reports):
    body = get(client, "/sources", key).get_json()
    assert (body["total"], body["limit"], body["offset"], body["has_any"]) == (4, 50, 0, True)
    rows = {row["source_ip"]: row for row in body["sources"]}
    assert rows["192.0.2.2"] == {
        "source_ip": "192.0.2.2", "total_messages": 9, "pass": 6, "fail": 3, "spf_fail": 7,
        "dkim_fail": 3, "compliance_rate": 66.67, "domains": ["example.com", "other.example"],
        "first_seen": "2024-03-01T00:00:00Z", "last_seen": "2024-03-04T00:00:00Z", "ptr": None,
        "service_name": None, "service_slug": None, "service_icon": None,
        "abuse_status": "unknown", "authorized": False, "country": None}
    assert rows["10.0.0.9"]["service_slug"] == "mailgun" and rows["10.0.0.9"]["authorized"]
    assert "203.0.113.1" not in rows


def test_an_organization_without_reports_has_an_empty_list(client, org, key):
    assert get(client, "/sources", key).get_json() == {
        "sources": [], "total": 0, "limit": 50, "offset": 0, "has_any": False}


@pytest.mark.parametrize("query, expected", [
    ("", ["192.0.2.1", "192.0.2.2", "10.0.0.9", "2001:db8::1"]),
    ("?sort_dir=asc", ["2001:db8::1", "10.0.0.9", "192.0.2.2", "192.0.2.1"]),
    ("?sort_by=source_ip&sort_dir=asc", ["10.0.0.9", "192.0.2.1", "192.0.2.2", "2001:db8::1"]),
    ("?sort_by=source_ip", ["2001:db8::1", "192.0.2.2", "192.0.2.1", "10.0.0.9"]),
    ("?sort_by=compliance&sort_dir=asc", ["2001:db8::1", "192.0.2.2", "192.0.2.1", "10.0.0.9"]),
    ("?sort_by=auth_failures", ["192.0.2.2", "10.0.0.9", "2001:db8::1", "192.0.2.1"]),
    ("?sort_by=domains", ["192.0.2.2", "10.0.0.9", "2001:db8::1", "192.0.2.1"]),
    ("?sort_by=first_seen&sort_dir=asc", ["192.0.2.1", "192.0.2.2", "2001:db8::1", "10.0.0.9"]),
    ("?sort_by=last_seen", ["10.0.0.9", "192.0.2.2", "2001:db8::1", "192.0.2.1"]),
    ("?sort_by=nonsense", ["192.0.2.1", "192.0.2.2", "10.0.0.9", "2001:db8::1"]),
])
def test_each_sort_orders_rows_and_ties_fall_to_the_id(client, key, reports, query, expected):
    assert ips(client, key, query) == expected


@pytest.mark.parametrize("query, expected", [
    ("?domain=other.example", ["10.0.0.9", "192.0.2.2"]),
    ("?domain=unknown.example", []),
    ("?reputation=malicious", ["2001:db8::1"]),
    ("?reputation=clean", ["10.0.0.9"]),
    ("?reputation=bogus", ["192.0.2.1", "192.0.2.2", "10.0.0.9", "2001:db8::1"]),
    ("?has_failures=true", ["192.0.2.2", "10.0.0.9", "2001:db8::1"]),
    ("?has_failures=false", ["192.0.2.1"]),
    ("?search=MAILGUN", ["10.0.0.9"]),
    ("?search=other.ex", ["192.0.2.2", "10.0.0.9"]),
    ("?search=2001:DB8", ["2001:db8::1"]),
    ("?search=%25", []),
    ("?domain=example.com&has_failures=true&sort_by=auth_failures", ["192.0.2.2", "2001:db8::1"]),
])
def test_filters_keep_the_matching_rows(client, key, reports, query, expected):
    assert sorted(ips(client, key, query)) == sorted(expected)


def test_a_domain_filter_shows_that_domains_figures(client, key, reports):
    body = get(client, "/sources?domain=other.example&sort_by=total_messages", key).get_json()
    row = {r["source_ip"]: r for r in body["sources"]}["192.0.2.2"]
    assert (row["total_messages"], row["pass"], row["domains"]) == (
        2, 2, ["example.com", "other.example"])
    assert [r["source_ip"] for r in body["sources"]] == ["10.0.0.9", "192.0.2.2"]


def test_paging_and_a_bad_domain(client, key, reports):
    body = get(client, "/sources?limit=1&offset=1", key).get_json()
    assert (ips(client, key, "?limit=1&offset=1"), body["total"]) == (["192.0.2.2"], 4)
    assert_error(get(client, "/sources?domain=not..valid", key), 400, "invalid_domain")


def test_detail_holds_domains_timeline_geo_blocklist_and_classification(client, key, reports):
    body = get(client, "/sources/192.0.2.2", key).get_json()
    assert body["domains"] == [
        {"domain": "example.com", "total_messages": 7, "pass": 4, "fail": 3, "spf_fail": 7,
         "dkim_fail": 3, "compliance_rate": 57.14,
         "dispositions": {"none": 4, "quarantine": 3, "reject": 0},
         "first_seen": "2024-03-01T00:00:00Z", "last_seen": "2024-03-03T00:00:00Z"},
        {"domain": "other.example", "total_messages": 2, "pass": 2, "fail": 0, "spf_fail": 0,
         "dkim_fail": 0, "compliance_rate": 100.0,
         "dispositions": {"none": 2, "quarantine": 0, "reject": 0},
         "first_seen": "2024-03-03T00:00:00Z", "last_seen": "2024-03-04T00:00:00Z"}]
    assert body["timeline"] == [
        {"date": "2024-03-01", "total_messages": 4, "pass": 4, "fail": 0},
        {"date": "2024-03-02", "total_messages": 3, "pass": 0, "fail": 3},
        {"date": "2024-03-03", "total_messages": 2, "pass": 2, "fail": 0}]
    assert body["geo"] == {"country": None, "country_name": None, "asn": None, "as_org": None}
    assert body["blocklist"] == {"status": "unknown", "listed_on": [], "checked_at": None}
    assert (body["classification"], body["authorized"], body["total_messages"]) == (
        "unknown", False, 9)


def test_any_spelling_of_an_ipv6_address_finds_its_source(client, key, reports):
    for spelled in ("2001:db8::1", "2001:DB8:0:0:0:0:0:1", "2001:0db8::0001"):
        body = get(client, f"/sources/{spelled}", key).get_json()
        assert body["source_ip"] == "2001:db8::1"
        assert body["abuse_status"] == "malicious"
        assert body["blocklist"]["listed_on"] == ["zen.spamhaus.org"]
        assert body["domains"][0]["dispositions"]["reject"] == 1


def test_a_bad_ip_is_400_and_an_unseen_one_404(client, key, reports):
    assert_error(get(client, "/sources/not-an-ip", key), 400, "invalid_ip")
    assert_error(get(client, "/sources/999.1.1.1", key), 400, "invalid_ip")
    assert_error(get(client, "/sources/198.51.100.200", key), 404, "source_not_found")
    assert_error(get(client, "/sources/203.0.113.1", key), 404, "source_not_found")  # not ours


def test_a_key_without_analytics_read_is_refused(client, org, reports):
    billing = make_key(org, role="billing")[1]
    assert_error(get(client, "/sources", billing), 403, "insufficient_permission",
                 required="analytics:read")
    assert_error(get(client, "/sources/192.0.2.2", billing), 403, "insufficient_permission",
                 required="analytics:read")


def test_times_are_whole_seconds_utc(client, key, reports):
    Source.update(enriched_at=dt.datetime(2024, 3, 5, 1, 2, 3, 456)).execute()
    assert get(client, "/sources/10.0.0.9", key).get_json()["enriched_at"] == "2024-03-05T01:02:03Z"


def test_a_remembered_total_moves_with_a_new_report_and_with_enrichment(client, org, key,
                                                                        reports):
    def total(query):
        return get(client, f"/sources{query}", key).get_json()["total"]
    assert (total("?reputation=clean&limit=1"), total("?search=192.0&limit=1")) == (1, 2)
    Source.update(abuse_status="clean", enriched_at=dt.datetime(2026, 1, 1)).where(
        Source.ip == "192.0.2.1").execute()
    assert total("?reputation=clean&limit=1") == 2
    make_report(org, records=[{"source_ip": "192.0.2.77"}])
    assert total("?search=192.0&limit=1") == 3


def test_a_remembered_page_moves_with_a_new_report_and_with_enrichment(client, org, key,
                                                                       reports):
    def row(ip):
        return next(r for r in get(client, "/sources", key).get_json()["sources"]
                    if r["source_ip"] == ip)
    assert (row("192.0.2.1")["ptr"], ips(client, key)[0]) == (None, "192.0.2.1")
    Source.update(ptr="mx.example.net", enriched_at=dt.datetime(2026, 1, 1)).where(
        Source.ip == "192.0.2.1").execute()
    assert row("192.0.2.1")["ptr"] == "mx.example.net"
    make_report(org, records=[{"source_ip": "192.0.2.77", "count": 50}])
    assert ips(client, key)[0] == "192.0.2.77"
