"""GET /reports: the list, its filters, sorts and downloads; the organization's reports only."""
from __future__ import annotations

import csv
import io
from datetime import datetime

import pytest

from rules.authenticity import VERIFIED, Provenance
from tests.factories import epoch, make_key, make_org, make_report
from tests.webapp.helpers import assert_error, get

FAIL = {"dkim": "fail", "spf": "fail"}


def window(begin: str, end: str) -> dict:
    return {"date_begin": epoch(begin), "date_end": epoch(end)}


def ids(resp) -> list[str]:
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return [r["id"] for r in resp.get_json()["reports"]]


def test_a_report_summary_has_every_field_of_the_contract(client, org, key):
    report = make_report(org, "example.com", [{"count": 3}, {"count": 1, **FAIL}], org_name="google.com",
                         report_id="r-1", p="reject", received_at=datetime(2024, 1, 6, 3, 4, 5),
                         **window("2024-01-05T00:00:00", "2024-01-05T23:59:59"))
    body = get(client, "/reports", key).get_json()
    assert body == {"reports": [{
        "id": report.id, "report_id": "r-1", "org_name": "google.com", "domain": "example.com",
        "total_messages": 4, "compliant_messages": 3, "compliance_rate": 75.0, "policy_p": "reject",
        "date_begin": "2024-01-05T00:00:00Z", "date_end": "2024-01-05T23:59:59Z",
        "received_at": "2024-01-06T03:04:05Z", "authenticity": "unchecked", "signed_by": ""}],
        "total": 1, "limit": 50, "offset": 0, "has_any": True}


def test_filters_by_what_the_mail_proves(client, org, key):
    signed = make_report(org, report_id="r-signed",
                         provenance=Provenance(VERIFIED, "google.com", "", "google.com"))
    make_report(org, report_id="r-file")
    assert ids(get(client, "/reports?authenticity=verified", key)) == [signed.id]
    assert len(ids(get(client, "/reports?authenticity=UNCHECKED", key))) == 1
    assert len(ids(get(client, "/reports?authenticity=genuine", key))) == 2     # no filter
    row = get(client, "/reports?authenticity=verified", key).get_json()["reports"][0]
    assert (row["authenticity"], row["signed_by"]) == ("verified", "google.com")
    detail = get(client, f"/reports/{signed.id}", key).get_json()
    assert (detail["authenticity"], detail["signed_by"], detail["authenticity_reason"]) == (
        "verified", "google.com", "")


def test_an_organization_without_reports_gets_an_empty_list_and_has_any_false(client, org, key):
    assert get(client, "/reports", key).get_json() == {
        "reports": [], "total": 0, "limit": 50, "offset": 0, "has_any": False}


def test_has_any_ignores_filters(client, org, key):
    make_report(org, "example.com")
    body = get(client, "/reports?domain=nomatch", key).get_json()
    assert (body["reports"], body["total"], body["has_any"]) == ([], 0, True)


def test_reports_are_newest_first_by_default(client, org, key):
    old = make_report(org, **window("2024-01-01T00:00:00", "2024-01-02T00:00:00"))
    new = make_report(org, **window("2024-01-03T00:00:00", "2024-01-04T00:00:00"))
    assert ids(get(client, "/reports", key)) == [new.id, old.id]


def test_reports_of_another_organization_are_never_listed(client, org, key):
    make_report(make_org(), "example.com", [{"source_ip": "203.0.113.9"}])
    for query in ("", "?domain=example", "?source_ip=203.0.113.9", "?search=example"):
        body = get(client, "/reports" + query, key).get_json()
        assert (body["reports"], body["total"], body["has_any"]) == ([], 0, False)


def test_domain_is_a_substring_match_on_the_report_domain(client, org, key):
    a = make_report(org, "mail.example.com")
    make_report(org, "other.net")
    assert ids(get(client, "/reports?domain=example", key)) == [a.id]
    assert ids(get(client, "/reports?domain=EXAMPLE.C", key)) == [a.id]


def test_org_is_a_substring_match_on_the_reporting_organization(client, org, key):
    a = make_report(org, org_name="Google Inc.")
    make_report(org, org_name="Yahoo")
    assert ids(get(client, "/reports?org=google", key)) == [a.id]


def test_like_wildcards_in_a_filter_match_only_themselves(client, org, key):
    make_report(org, org_name="Google")
    pct = make_report(org, org_name="100% mail")
    assert ids(get(client, "/reports?org=%25", key)) == [pct.id]
    assert ids(get(client, "/reports?search=_", key)) == []


def test_result_pass_keeps_reports_where_every_message_passed(client, org, key):
    clean = make_report(org, records=[{"count": 5}])
    dirty = make_report(org, records=[{"count": 5}, {"count": 1, **FAIL}])
    empty = make_report(org, records=[{"count": 0}])
    assert ids(get(client, "/reports?result=pass", key)) == [clean.id]
    assert ids(get(client, "/reports?result=fail", key)) == [dirty.id]
    assert set(ids(get(client, "/reports?result=other", key))) == {clean.id, dirty.id, empty.id}


def test_source_ip_keeps_reports_containing_exactly_that_ip(client, org, key):
    a = make_report(org, records=[{"source_ip": "192.0.2.1"}, {"source_ip": "2001:db8::1"}])
    make_report(org, records=[{"source_ip": "192.0.2.10"}])
    assert ids(get(client, "/reports?source_ip=192.0.2.1", key)) == [a.id]
    assert ids(get(client, "/reports?source_ip=2001:db8::1", key)) == [a.id]
    assert ids(get(client, "/reports?source_ip=192.0.2", key)) == []


def test_from_keeps_windows_starting_on_or_after_the_day(client, org, key):
    a = make_report(org, **window("2024-01-05T00:00:00", "2024-01-06T00:00:00"))
    make_report(org, **window("2024-01-04T12:00:00", "2024-01-05T12:00:00"))
    assert ids(get(client, "/reports?from=2024-01-05", key)) == [a.id]


def test_to_is_inclusive_and_an_end_at_midnight_belongs_to_the_day_before(client, org, key):
    a = make_report(org, **window("2024-01-05T00:00:00", "2024-01-06T00:00:00"))
    b = make_report(org, **window("2024-01-05T00:00:00", "2024-01-06T00:00:01"))
    assert ids(get(client, "/reports?to=2024-01-05", key)) == [a.id]
    assert set(ids(get(client, "/reports?to=2024-01-06", key))) == {a.id, b.id}


def test_a_straddling_window_needs_a_range_covering_both_days(client, org, key):
    a = make_report(org, **window("2024-01-05T12:00:00", "2024-01-06T12:00:00"))
    assert ids(get(client, "/reports?from=2024-01-05&to=2024-01-05", key)) == []
    assert ids(get(client, "/reports?from=2024-01-06&to=2024-01-06", key)) == []
    assert ids(get(client, "/reports?from=2024-01-05&to=2024-01-06", key)) == [a.id]


@pytest.mark.parametrize("query", ["from=2024-02-30", "to=20240105", "from=2024-1-5", "to=", "from=today"])
def test_a_from_or_to_that_is_not_yyyy_mm_dd_is_400_invalid_date(client, org, key, query):
    assert_error(get(client, "/reports?" + query, key), 400, "invalid_date")


@pytest.mark.parametrize("term", ["mailchimp", "EXAMPLE.ORG", "rid-77", "RID-77"])
def test_search_matches_reporter_domain_and_report_id_case_insensitively(client, org, key, term):
    a = make_report(org, "example.org", org_name="Mailchimp", report_id="rid-77")
    make_report(org, "other.net", org_name="Yahoo", report_id="x")
    assert ids(get(client, "/reports?search=" + term, key)) == [a.id]


def test_search_matches_the_service_id_in_either_case(client, org, key):
    a = make_report(org)
    make_report(org)
    assert ids(get(client, "/reports?search=" + a.id[-12:].lower(), key)) == [a.id]


def test_a_longer_search_term_is_cut_to_100_characters(client, org, key):
    a = make_report(org, report_id="x" * 100)
    assert ids(get(client, "/reports?search=" + "x" * 100 + "y" * 50, key)) == [a.id]


def _sorted(client, key, sort_by, direction=""):
    return ids(get(client, f"/reports?sort_by={sort_by}{direction}", key))


def test_sort_by_org_name_is_case_insensitive_with_id_as_tie_breaker(client, org, key):
    b = make_report(org, org_name="beta")
    a1 = make_report(org, org_name="Alpha")
    a2 = make_report(org, org_name="alpha")
    ties = sorted([a1.id, a2.id])
    assert _sorted(client, key, "org_name", "&sort_dir=asc") == ties + [b.id]
    assert _sorted(client, key, "org_name") == [b.id] + ties[::-1]


@pytest.mark.parametrize("sort_by, field", [
    ("date_end", "date_end"), ("received", "received_at"), ("domain", "domain"),
    ("total_messages", "total_messages"), ("report_id", "report_id"), ("compliance", "compliance_rate")])
def test_each_sort_orders_by_its_field_in_either_direction(client, org, key, sort_by, field):
    make_report(org, "b.example", [{"count": 2}, {"count": 2, **FAIL}], report_id="B",
                received_at=datetime(2024, 2, 1), **window("2024-01-02T00:00:00", "2024-01-03T00:00:00"))
    make_report(org, "a.example", [{"count": 9}], report_id="a",
                received_at=datetime(2024, 3, 1), **window("2024-01-01T00:00:00", "2024-01-02T00:00:00"))
    make_report(org, "c.example", [{"count": 1, **FAIL}], report_id="c",
                received_at=datetime(2024, 1, 1), **window("2024-01-03T00:00:00", "2024-01-04T00:00:00"))
    for direction, reverse in (("&sort_dir=asc", False), ("&sort_dir=desc", True), ("", True)):
        rows = get(client, f"/reports?sort_by={sort_by}{direction}", key).get_json()["reports"]
        values = [r[field].lower() if isinstance(r[field], str) else r[field] for r in rows]
        assert values == sorted(values, reverse=reverse) and len(set(values)) == 3


def test_an_unknown_sort_falls_back_to_date_end_descending(client, org, key):
    old = make_report(org, org_name="a", **window("2024-01-01T00:00:00", "2024-01-02T00:00:00"))
    new = make_report(org, org_name="b", **window("2024-01-03T00:00:00", "2024-01-04T00:00:00"))
    assert _sorted(client, key, "nonsense", "&sort_dir=sideways") == [new.id, old.id]


def test_equal_sort_values_page_without_overlap(client, org, key):
    made = {make_report(org, org_name="same", **window("2024-01-01T00:00:00", "2024-01-02T00:00:00")).id
            for _ in range(7)}
    seen = []
    for offset in range(0, 7, 3):
        seen += ids(get(client, f"/reports?sort_by=org_name&limit=3&offset={offset}", key))
    assert sorted(seen) == sorted(made)


@pytest.mark.parametrize("query, limit, offset, count", [
    ("?limit=2", 2, 0, 2), ("?limit=2&offset=4", 2, 4, 1), ("?limit=500", 200, 0, 5),
    ("?limit=0", 50, 0, 5), ("?limit=abc&offset=-2", 50, 0, 5), ("?offset=10", 50, 10, 0)])
def test_paging_echoes_the_limit_and_offset_applied(client, org, key, query, limit, offset, count):
    for _ in range(5):
        make_report(org)
    body = get(client, "/reports" + query, key).get_json()
    assert (len(body["reports"]), body["total"], body["limit"], body["offset"]) == (count, 5, limit, offset)


def test_format_csv_downloads_the_page_with_the_decided_columns(client, org, key):
    make_report(org, "example.com", [{"count": 4}], org_name="=cmd|' /C calc'!A0", report_id="-1+1",
                p="quarantine", **window("2024-01-05T00:00:00", "2024-01-06T00:00:00"))
    report = make_report(org, "example.com", **window("2024-01-07T00:00:00", "2024-01-07T12:00:00"))
    resp = get(client, "/reports?format=csv&limit=1&offset=1", key)
    assert resp.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert resp.headers["Content-Disposition"] == 'attachment; filename="reports.csv"'
    rows = list(csv.reader(io.StringIO(resp.get_data(as_text=True))))
    assert rows[0] == ["id", "report_id", "org_name", "domain", "total_messages", "compliant_messages",
                       "compliance_rate", "policy_p", "date_begin", "date_end"]
    assert rows[1][1:] == ["'-1+1", "'=cmd|' /C calc'!A0", "example.com", "4", "4", "100.0",
                           "quarantine", "2024-01-05", "2024-01-05"]
    assert len(rows) == 2 and report.id not in resp.get_data(as_text=True)


def test_a_download_of_one_page_links_the_next_and_says_how_many_match(client, org, key):
    for _ in range(3):
        make_report(org)
    first = get(client, "/reports?format=csv&limit=2&domain=example.com", key)
    assert first.headers["X-Total-Count"] == "3"
    assert first.headers["Link"] == ('<http://localhost/api/v1/reports?format=csv&limit=2'
                                     '&domain=example.com&offset=2>; rel="next"')
    last = get(client, "/reports?format=json&limit=2&offset=2", key)
    assert last.headers["X-Total-Count"] == "3" and "Link" not in last.headers
    assert len(last.get_json()) == 1


def test_format_json_downloads_the_page_of_summaries(client, org, key):
    make_report(org)
    listed = get(client, "/reports", key).get_json()["reports"]
    resp = get(client, "/reports?format=json", key)
    assert resp.mimetype == "application/json"
    assert resp.headers["Content-Disposition"] == 'attachment; filename="reports.json"'
    assert resp.get_json() == listed


def test_an_unknown_format_returns_the_envelope(client, org, key):
    assert "reports" in get(client, "/reports?format=xml", key).get_json()


def test_reports_need_report_read(client, org):
    for role in ("viewer", "billing"):
        _, plaintext = make_key(org, role=role)
        assert_error(get(client, "/reports", plaintext), 403, "insufficient_permission", required="report:read")


def test_the_report_list_runs_a_bounded_number_of_queries(client, org, key, count_queries):
    for n in range(12):
        make_report(org, records=[{"source_ip": f"192.0.2.{n}"}, {"source_ip": "198.51.100.1"}])
    get(client, "/enums", key)                       # the key is known and touched
    for query in ("?limit=5", "?limit=5&domain=exa&search=e&source_ip=198.51.100.1&sort_by=org_name",
                  "?domain=none", "?result=fail"):
        before = count_queries.count
        get(client, "/reports" + query, key)
        assert count_queries.count - before <= 4, query     # version, domains, page, total
        before = count_queries.count
        get(client, "/reports" + query, key)
        assert count_queries.count - before <= 1, query     # the version: the page is remembered


def test_a_report_stored_after_a_page_was_remembered_is_listed_and_counted(client, org, key):
    for _ in range(3):
        make_report(org, "example.com", [{"count": 1, **FAIL}])
    assert get(client, "/reports?result=fail&limit=1", key).get_json()["total"] == 3
    make_report(org, "example.com", [{"count": 1, **FAIL}])
    assert get(client, "/reports?result=fail&limit=1", key).get_json()["total"] == 4
    make_report(org, "examples.net", [{"count": 1, **FAIL}])
    assert get(client, "/reports?domain=example&limit=1", key).get_json()["total"] == 5


def test_filters_combine_and_each_shape_answers_with_its_own_values(client, org, key):
    a = make_report(org, "a.example", [{"source_ip": "192.0.2.1", "count": 5, **FAIL}])
    b = make_report(org, "b.example", [{"source_ip": "192.0.2.1", "count": 9, **FAIL}])
    make_report(org, "b.example", [{"source_ip": "192.0.2.1", "count": 3}])
    c = make_report(org, "c.example", [{"source_ip": "192.0.2.2", "count": 7, **FAIL}])
    query = "/reports?domain=.example&source_ip=192.0.2.1&result=fail&sort_by=total_messages&sort_dir=asc"
    assert ids(get(client, query, key)) == [a.id, b.id]
    assert ids(get(client, query.replace("192.0.2.1", "192.0.2.2"), key)) == [c.id]
    assert ids(get(client, query.replace("domain=.example", "domain=b.ex"), key)) == [b.id]


@pytest.mark.parametrize("query", ["search=a%00b", "org=%00", "domain=%00", "source_ip=%00"])
def test_a_nul_in_a_text_filter_matches_nothing(client, org, key, query):
    make_report(org)
    body = get(client, "/reports?" + query, key).get_json()
    assert (body["reports"], body["total"], body["has_any"]) == ([], 0, True)


def test_sort_by_domain_breaks_ties_by_id_not_by_period(client, org, key):
    late = make_report(org, "same.example", **window("2024-01-03T00:00:00", "2024-01-04T00:00:00"))
    early = make_report(org, "same.example", **window("2024-01-01T00:00:00", "2024-01-02T00:00:00"))
    other = make_report(org, "other.example")
    ties = sorted([late.id, early.id])
    assert _sorted(client, key, "domain", "&sort_dir=asc") == [other.id] + ties
    assert _sorted(client, key, "domain") == ties[::-1] + [other.id]
