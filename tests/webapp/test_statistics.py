"""GET /statistics: all-time totals for the organization or exactly one domain."""
from __future__ import annotations

import pytest

from tests.factories import make_domain, make_key, make_org, make_report
from tests.webapp.helpers import assert_error, get

FAIL = {"dkim": "fail", "spf": "fail"}
ZEROS = {"total_reports": 0, "total_messages": 0, "compliant_messages": 0, "compliance_rate": 0.0,
         "unique_source_ips": 0, "unique_domains": 0, "has_data": False}


@pytest.fixture
def reports(org):
    make_report(org, "example.com", [{"source_ip": "192.0.2.1", "count": 6},
                                     {"source_ip": "192.0.2.2", "count": 2, **FAIL}])
    make_report(org, "example.com", [{"source_ip": "192.0.2.1", "count": 1}],
                date_begin=86400 * 19000, date_end=86400 * 19001)
    make_report(org, "mail.example.com", [{"source_ip": "198.51.100.1", "count": 3, **FAIL}])
    make_report(make_org(), "example.com", [{"source_ip": "203.0.113.1", "count": 100}])


def test_statistics_before_any_report_are_zeros_and_has_data_false(client, org, key):
    assert get(client, "/statistics", key).get_json() == ZEROS


def test_statistics_count_every_report_of_the_organization_all_time(client, key, reports):
    assert get(client, "/statistics", key).get_json() == {
        "total_reports": 3, "total_messages": 12, "compliant_messages": 7, "compliance_rate": 58.33,
        "unique_source_ips": 3, "unique_domains": 2, "has_data": True}


def test_domain_is_an_exact_match_and_a_subdomain_is_a_separate_domain(client, key, reports):
    assert get(client, "/statistics?domain=example.com", key).get_json() == {
        "total_reports": 2, "total_messages": 9, "compliant_messages": 7, "compliance_rate": 77.78,
        "unique_source_ips": 2, "unique_domains": 1, "has_data": True}
    assert get(client, "/statistics?domain=MAIL.example.com.", key).get_json()["total_reports"] == 1


def test_a_valid_domain_that_is_not_monitored_gives_zeros(client, org, key, reports):
    make_domain(org, "quiet.example")
    assert get(client, "/statistics?domain=unknown.example", key).get_json() == ZEROS
    assert get(client, "/statistics?domain=quiet.example", key).get_json() == ZEROS


@pytest.mark.parametrize("bad", ["", "nodot", "exa mple.com", "a..b", "-x.com"])
def test_an_invalid_domain_is_400_invalid_domain(client, org, key, bad):
    assert_error(get(client, "/statistics?domain=" + bad, key), 400, "invalid_domain")


def test_statistics_need_analytics_read(client, org):
    _, plaintext = make_key(org, role="billing")
    assert_error(get(client, "/statistics", plaintext), 403, "insufficient_permission",
                 required="analytics:read")


def test_a_report_stored_after_statistics_were_remembered_is_counted(client, org, key):
    make_report(org, "example.com", [{"count": 2}])
    assert get(client, "/statistics", key).get_json()["total_messages"] == 2
    make_report(org, "example.com", [{"count": 3, **FAIL}])
    body = get(client, "/statistics?domain=example.com", key).get_json()
    assert (body["total_reports"], body["total_messages"], body["compliance_rate"]) == (2, 5, 40.0)
    assert get(client, "/statistics", key).get_json()["total_messages"] == 5



def test_a_report_replaced_after_statistics_were_remembered_is_counted_as_it_is_now(
        client, config, org, key, tmp_path):
    from ingest.pipeline import ingest_paths
    from ingest.replacing import replace
    from tests.ingest import xmlbuild as xb
    make_domain(org, "example.com")
    for name, count in (("stored.xml", 2), ("conflicting.xml", 7)):
        (tmp_path / name).write_bytes(xb.report_bytes(report_id="r-1",
                                                      records=[xb.record(count=count)]))
    assert next(ingest_paths([tmp_path / "stored.xml"], config=config)).status == "stored"
    assert get(client, "/statistics", key).get_json()["total_messages"] == 2
    assert next(ingest_paths([tmp_path / "conflicting.xml"], config=config)).status == "refused"
    replace(1, apply=True)
    assert get(client, "/statistics", key).get_json()["total_messages"] == 7
