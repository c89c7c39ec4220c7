"""GET /reports/{id} and /reports/date-range."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.factories import epoch, make_key, make_org, make_report
from tests.webapp.helpers import assert_error, get


RECORDS = [
    {"source_ip": "192.0.2.1", "count": 7, "envelope_to": "example.net"},
    {"source_ip": "198.51.100.2", "count": 2, "disposition": "quarantine", "dkim": "fail", "spf": "pass",
     "reasons": [{"Type": "local_policy", "Comment": "x"}],
     "auth_dkim": None,
     "auth_spf": [{"Domain": "mail.example.com", "Scope": "mfrom", "Result": "pass", "HumanResult": ""},
                  {"Domain": "other.net", "Scope": "helo", "Result": "fail", "HumanResult": "no"}]},
    {"source_ip": "203.0.113.3", "count": 1, "dkim": "fail", "spf": "fail", "auth_dkim": None, "auth_spf": None},
]


@pytest.fixture
def report(org):
    return make_report(org, "example.com", RECORDS, org_name="google.com", report_id="rid-1",
                       email="noreply@google.com", extra_contact_info="https://support.google.com",
                       generator="gen 1.0", errors=["dns timeout"], p="quarantine", sp="reject",
                       pct=50, fo="1", testing="n", psd="n", discovery_method="treewalk",
                       adkim="s", aspf="r", warnings=["a departure"],
                       date_begin=epoch("2024-01-05T00:00:00"), date_end=epoch("2024-01-06T00:00:00"))


def test_the_detail_keeps_the_reporters_field_names_and_epoch_dates(client, key, report):
    body = get(client, f"/reports/{report.id}", key).get_json()
    assert body["Version"] == "1.0"
    assert body["ReportMetadata"] == {
        "OrgName": "google.com", "Email": "noreply@google.com",
        "ExtraContactInfo": "https://support.google.com", "ReportID": "rid-1",
        "DateRange": {"Begin": 1704412800, "End": 1704499200}, "Errors": ["dns timeout"],
        "Generator": "gen 1.0"}
    assert body["PolicyPublished"] == {
        "Domain": "example.com", "ADKIM": "s", "ASPF": "r", "P": "quarantine", "SP": "reject", "NP": "",
        "PCT": 50, "FO": "1", "T": "n", "PSD": "n", "DiscoveryMethod": "treewalk"}


def test_records_come_in_the_reporters_order_and_shape(client, key, report):
    records = get(client, f"/reports/{report.id}", key).get_json()["Records"]
    assert [r["Row"]["SourceIP"] for r in records] == ["192.0.2.1", "198.51.100.2", "203.0.113.3"]
    assert records[1] == {
        "Row": {"SourceIP": "198.51.100.2", "Count": 2,
                "PolicyEvaluated": {"Disposition": "quarantine", "DKIM": "fail", "SPF": "pass",
                                    "Reason": [{"Type": "local_policy", "Comment": "x"}]}},
        "Identifiers": {"EnvelopeTo": "", "EnvelopeFrom": "example.com", "HeaderFrom": "example.com"},
        "AuthResults": {"DKIM": None, "SPF": RECORDS[1]["auth_spf"]}}
    assert records[0]["Row"]["PolicyEvaluated"]["Reason"] is None
    assert records[0]["Identifiers"]["EnvelopeTo"] == "example.net"


def test_classifications_alignment_and_failure_summary_follow_the_records(client, key, report):
    body = get(client, f"/reports/{report.id}", key).get_json()
    assert len(body["record_classifications"]) == 3
    assert body["record_classifications"][0] == "authenticated"
    assert body["record_alignment"][1] == {"spf": [True, False], "dkim": None}
    assert body["record_alignment"][2] == {"spf": None, "dkim": None}
    assert body["failure_summary"] == {"spf_only": 0, "dkim_only": 1, "both": 1, "total": 3}
    assert body["parse_warnings"] == ["a departure"]


def test_a_report_without_warnings_has_null_parse_warnings(client, org, key):
    report = make_report(org)
    assert get(client, f"/reports/{report.id}", key).get_json()["parse_warnings"] is None


def test_a_summary_row_always_agrees_with_its_detail(client, key, report):
    (summary,) = get(client, "/reports", key).get_json()["reports"]
    detail = get(client, f"/reports/{summary['id']}", key).get_json()
    counts = [r["Row"]["Count"] for r in detail["Records"]]
    passed = [r["Row"]["Count"] for r in detail["Records"]
              if "pass" in (r["Row"]["PolicyEvaluated"]["DKIM"], r["Row"]["PolicyEvaluated"]["SPF"])]
    assert summary["report_id"] == detail["ReportMetadata"]["ReportID"]
    assert summary["org_name"] == detail["ReportMetadata"]["OrgName"]
    assert summary["domain"] == detail["PolicyPublished"]["Domain"]
    assert summary["policy_p"] == detail["PolicyPublished"]["P"]
    assert (summary["total_messages"], summary["compliant_messages"]) == (sum(counts), sum(passed))
    assert summary["compliance_rate"] == round(100 * sum(passed) / sum(counts), 2)
    begin = datetime.fromtimestamp(detail["ReportMetadata"]["DateRange"]["Begin"], timezone.utc)
    assert summary["date_begin"] == begin.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_lower_case_id_finds_the_report(client, key, report):
    assert get(client, f"/reports/{report.id.lower()}", key).get_json()["ReportMetadata"]["ReportID"] == "rid-1"


@pytest.mark.parametrize("bad", ["123", "not-a-ulid", "01HQ3Z7K8V9W0X1Y2Z3A4B5C6I", "Z" * 26, "0" * 27])
def test_an_id_that_is_not_a_valid_identifier_is_400_invalid_id(client, org, key, bad):
    assert_error(get(client, f"/reports/{bad}", key), 400, "invalid_id")


def test_an_unknown_id_is_404_report_not_found(client, org, key):
    assert_error(get(client, "/reports/01HQ3Z7K8V9W0X1Y2Z3A4B5C6D", key), 404, "report_not_found")


def test_a_report_of_another_organization_is_404_report_not_found(client, org, key):
    theirs = make_report(make_org())
    assert_error(get(client, f"/reports/{theirs.id}", key), 404, "report_not_found")


def test_a_path_below_a_report_is_not_documented(client, key, report):
    assert_error(get(client, f"/reports/{report.id}/records", key), 404, "route_not_found")


def test_the_detail_needs_report_read(client, org, report):
    _, plaintext = make_key(org, role="viewer")
    assert_error(get(client, f"/reports/{report.id}", plaintext), 403, "insufficient_permission",
                 required="report:read")


def test_the_detail_runs_two_queries(client, key, report, count_queries):
    get(client, f"/reports/{report.id}", key)
    before = count_queries.count
    get(client, f"/reports/{report.id}", key)
    assert count_queries.count - before == 2


def test_the_date_range_is_null_before_any_report(client, org, key):
    assert get(client, "/reports/date-range", key).get_json() == {"earliest": None, "latest": None}


def test_the_date_range_spans_the_first_and_last_report_days(client, org, key):
    make_report(org, date_begin=epoch("2024-01-05T06:00:00"), date_end=epoch("2024-01-06T00:00:00"))
    make_report(org, date_begin=epoch("2024-03-01T00:00:00"), date_end=epoch("2024-03-02T00:00:00"))
    make_report(make_org(), date_begin=epoch("2020-01-01T00:00:00"), date_end=epoch("2030-01-01T00:00:00"))
    assert get(client, "/reports/date-range", key).get_json() == {"earliest": "2024-01-05", "latest": "2024-03-01"}


def test_a_report_dated_before_dmarc_existed_does_not_start_the_date_range(client, org, key):
    make_report(org, date_begin=0, date_end=86400)
    make_report(org, date_begin=epoch("2024-03-01T00:00:00"), date_end=epoch("2024-03-02T00:00:00"))
    assert get(client, "/reports/date-range", key).get_json() == {"earliest": "2024-03-01", "latest": "2024-03-01"}
