"""GET /tls-reports and /tls-reports/{id}: the list, its filters and sorts, the report as received."""
from __future__ import annotations

from datetime import datetime

import pytest

from rules.authenticity import UNSIGNED, Provenance
from tests.factories import make_key, make_org, make_tls_report
from tests.ingest.tlsbuild import policy
from tests.webapp.helpers import assert_error, get


def day(text: str) -> dict:
    return {"start": f"{text}T00:00:00Z", "end": f"{text}T23:59:59Z"}


def ids(resp) -> list[str]:
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return [r["id"] for r in resp.get_json()["tls_reports"]]


def test_a_row_has_every_field_of_the_contract(client, org, key):
    report = make_tls_report(org, [policy("example.com", 90, 10, {"certificate-expired": 10}),
                                   policy("mail.example.com", 5, 0)],
                             org_name="Google Inc.", report_id="t-1",
                             received_at=datetime(2024, 1, 6, 3, 4, 5), **day("2024-01-05"))
    assert get(client, "/tls-reports", key).get_json() == {"tls_reports": [{
        "id": report.id, "report_id": "t-1", "org_name": "Google Inc.",
        "policy_domains": ["example.com", "mail.example.com"],
        "date_begin": "2024-01-05T00:00:00Z", "date_end": "2024-01-05T23:59:59Z",
        "received_at": "2024-01-06T03:04:05Z", "successful_sessions": 95,
        "failed_sessions": 10, "success_rate": 90.48, "authenticity": "unchecked",
        "signed_by": ""}],
        "total": 1, "limit": 50, "offset": 0, "has_any": True}


def test_an_organization_without_tls_reports_gets_an_empty_list(client, org, key):
    assert get(client, "/tls-reports", key).get_json() == {
        "tls_reports": [], "total": 0, "limit": 50, "offset": 0, "has_any": False}


def test_filters_by_domain_result_and_days(client, org, key):
    clean = make_tls_report(org, [policy("example.com", 5, 0)], report_id="a", **day("2024-01-05"))
    failing = make_tls_report(org, [policy("example.org", 5, 1, {"validation-failure": 1})],
                              report_id="b", **day("2024-01-07"))
    assert ids(get(client, "/tls-reports?domain=example.org", key)) == [failing.id]
    assert ids(get(client, "/tls-reports?domain=EXAMPLE.com", key)) == [clean.id]
    assert ids(get(client, "/tls-reports?domain=other.example", key)) == []
    assert ids(get(client, "/tls-reports?result=fail", key)) == [failing.id]
    assert ids(get(client, "/tls-reports?result=pass", key)) == [clean.id]
    assert ids(get(client, "/tls-reports?result=maybe", key)) == [failing.id, clean.id]
    assert ids(get(client, "/tls-reports?from=2024-01-06", key)) == [failing.id]
    assert ids(get(client, "/tls-reports?to=2024-01-06", key)) == [clean.id]
    filtered = get(client, "/tls-reports?result=fail&domain=example.com", key).get_json()
    assert filtered["total"] == 0 and filtered["has_any"] is True


def test_filters_by_what_the_mail_proves(client, org, key):
    unsigned = make_tls_report(org, report_id="t-unsigned", provenance=Provenance(UNSIGNED, "",
                                                                                  ""))
    make_tls_report(org, report_id="t-file")
    rows = get(client, "/tls-reports?authenticity=unsigned", key).get_json()["tls_reports"]
    assert [(r["id"], r["authenticity"]) for r in rows] == [(unsigned.id, "unsigned")]
    assert get(client, "/tls-reports?authenticity=x", key).get_json()["total"] == 2


@pytest.mark.parametrize("sort, expected", [
    ("", ["c", "b", "a"]), ("sort_by=date_end&sort_dir=asc", ["a", "b", "c"]),
    ("sort_by=org_name&sort_dir=asc", ["b", "c", "a"]), ("sort_by=failed_sessions", ["b", "a", "c"]),
    ("sort_by=received&sort_dir=asc", ["b", "a", "c"]), ("sort_by=nonsense", ["c", "b", "a"]),
])
def test_sorts(client, org, key, sort, expected):
    made = {
        "a": make_tls_report(org, [policy(failed=2, failures={"certificate-expired": 2})],
                             org_name="zeta", received_at=datetime(2024, 2, 2), **day("2024-01-01")),
        "b": make_tls_report(org, [policy(failed=9, failures={"certificate-expired": 9})],
                             org_name="Alpha", received_at=datetime(2024, 2, 1), **day("2024-01-02")),
        "c": make_tls_report(org, [policy()], org_name="beta", received_at=datetime(2024, 2, 3),
                             **day("2024-01-03")),
    }
    names = {report.id: name for name, report in made.items()}
    assert [names[i] for i in ids(get(client, f"/tls-reports?{sort}", key))] == expected


def test_paging_follows_the_shared_rules(client, org, key):
    for n in range(3):
        make_tls_report(org, report_id=f"r{n}", **day(f"2024-01-0{n + 1}"))
    body = get(client, "/tls-reports?limit=2&offset=1", key).get_json()
    assert (len(body["tls_reports"]), body["total"], body["limit"], body["offset"]) == (2, 3, 2, 1)
    assert get(client, "/tls-reports?limit=0", key).get_json()["limit"] == 50


@pytest.mark.parametrize("query, code", [("from=2024-02-30", "invalid_date"),
                                         ("to=yesterday", "invalid_date"),
                                         ("domain=not_a_domain!", "invalid_domain")])
def test_bad_filters_are_400(client, key, query, code):
    assert_error(get(client, f"/tls-reports?{query}", key), 400, code)


def test_the_detail_is_the_report_as_received_with_its_warnings(client, org, key):
    report = make_tls_report(org, [policy("example.com", 3, 1, {"tlsa-invalid": 1},
                                          **{"mx-host": "mx.example.com"})],
                             contact=None, report_id="t-9", **day("2024-01-05"))
    body = get(client, f"/tls-reports/{report.id.lower()}", key).get_json()
    assert list(body) == ["organization-name", "date-range", "contact-info", "report-id",
                          "policies", "parse_warnings", "authenticity", "signed_by",
                          "authenticity_reason"]
    assert body["authenticity_reason"] == "not from mail"
    assert body["report-id"] == "t-9" and body["contact-info"] is None
    assert body["date-range"] == {"start-datetime": "2024-01-05T00:00:00Z",
                                  "end-datetime": "2024-01-05T23:59:59Z"}
    assert body["policies"][0]["failure-details"] == [
        {"result-type": "tlsa-invalid", "failed-session-count": 1}]
    assert body["policies"][0]["policy"]["mx-host"] == "mx.example.com"
    assert body["parse_warnings"] == ["contact-info is missing",
                                      "policies[1] mx-host is a string, not a list"]


def test_the_detail_is_400_for_a_malformed_id_and_404_for_another_organizations(client, org, key):
    theirs = make_tls_report(make_org())
    assert_error(get(client, "/tls-reports/nope", key), 400, "invalid_id")
    assert_error(get(client, f"/tls-reports/{theirs.id}", key), 404, "report_not_found")
    assert_error(get(client, "/tls-reports/01HZX3Q9V2K8M4N6P7R8S9T0VW", key), 404,
                 "report_not_found")


def test_the_list_needs_report_read(client, org):
    billing = make_key(org, role="billing")[1]
    assert get(client, "/tls-reports", billing).status_code == 403
