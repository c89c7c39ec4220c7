"""TLS reports through the ingest pipeline: every container, routing, duplicates, refusals."""
import dataclasses
import gzip

import pytest

from ingest.pipeline import ingest_paths
from store.models import TlsDay, TlsPolicy, TlsReport
from tests.factories import make_domain, make_org
from tests.ingest import tlsbuild as tb

REPORT = tb.report_bytes([tb.policy("example.com", 90, 10, {"certificate-expired": 10}),
                          tb.policy("mail.example.com", 5, 0, policy_type="tlsa")])


@pytest.fixture
def acme(database):
    org = make_org("Acme")
    make_domain(org, "example.com")
    return org


def ingest(tmp_path, config, name, data, **kwargs):
    (tmp_path / name).write_bytes(data)
    [result] = ingest_paths([str(tmp_path / name)], config=config, **kwargs)
    return result


@pytest.mark.parametrize("name, data", [
    ("r.json", REPORT),
    ("r.json.gz", gzip.compress(REPORT)),
    ("plain.eml", tb.mail(REPORT, "application/tlsrpt+json", "r.json")),
    ("gzip.eml", tb.mail(gzip.compress(REPORT))),
    ("base64.eml", tb.mail(tb.base64_twice(gzip.compress(REPORT)))),
    ("untyped.eml", tb.mail(REPORT, "application/tlsrpt", "r.json", cte="7bit")),
])
def test_a_tls_report_is_stored_from_every_container(acme, tmp_path, config, name, data):
    result = ingest(tmp_path, config, name, data)
    assert result.status == "stored", result.error
    [report] = TlsReport.select()
    assert report.org_id == acme.id
    assert (report.successful_sessions, report.failed_sessions, report.success_rate) == (95, 10, 90.48)
    assert report.policy_domains == ["example.com", "mail.example.com"]
    assert [(p.policy_domain, p.policy_type, p.failures) for p in
            TlsPolicy.select().order_by(TlsPolicy.ordinal)] == [
        ("example.com", "sts", {"certificate-expired": 10}), ("mail.example.com", "tlsa", {})]
    assert result.reports[0]["sessions"] == 105 and result.reports[0]["kind"] == "tlsrpt"


def test_plain_json_labelled_gzip_is_read_with_a_warning(acme, tmp_path, config):
    result = ingest(tmp_path, config, "m.eml", tb.mail(REPORT))
    assert result.status == "stored", result.error
    assert TlsReport.get().parse_warnings == [
        "attachment marked application/tlsrpt+gzip holds plain JSON"]


def test_a_resent_report_is_a_duplicate_and_a_new_period_is_not(acme, tmp_path, config):
    assert ingest(tmp_path, config, "a.json", REPORT).status == "stored"
    assert ingest(tmp_path, config, "b.json", REPORT).status == "duplicate"
    later = tb.report_bytes(start="2026-08-02T00:00:00Z", end="2026-08-02T23:59:59Z")
    assert ingest(tmp_path, config, "c.json", later).status == "stored"
    assert TlsReport.select().count() == 2


def test_the_day_totals_add_up_per_domain(acme, tmp_path, config):
    ingest(tmp_path, config, "a.json", REPORT)
    ingest(tmp_path, config, "b.json", tb.report_bytes(
        [tb.policy("example.com", 1, 2, {"starttls-not-supported": 2}, policy_type="tlsa")],
        report_id="tls-2"))
    day = TlsDay.get(TlsDay.domain == "example.com")
    assert (day.reports, day.successful_sessions, day.failed_sessions) == (2, 91, 12)
    assert day.failures == {"certificate-expired": 10, "starttls-not-supported": 2}
    assert day.policy_types == ["sts", "tlsa"] and str(day.day) == "2026-08-01"


def test_a_report_for_domains_nobody_monitors_is_refused_saying_so(acme, tmp_path, config):
    data = tb.report_bytes([tb.policy("elsewhere.example"), tb.policy("other.example")])
    result = ingest(tmp_path, config, "r.json", data)
    assert result.status == "refused"
    assert "unroutable: no organization monitors elsewhere.example, other.example" in result.error
    assert ingest(tmp_path, config, "r.json", data, org=acme).status == "stored"


def test_a_report_for_several_organizations_domains_is_ambiguous(acme, tmp_path, config):
    make_domain(make_org("Other"), "other.example")
    data = tb.report_bytes([tb.policy("example.com"), tb.policy("other.example")])
    result = ingest(tmp_path, config, "r.json", data)
    assert result.status == "refused" and "ambiguous" in result.error and "--org" in result.error


def test_an_empty_policies_list_is_stored_for_a_named_organization_only(acme, tmp_path, config):
    data = tb.report_bytes([])
    assert "names no policy domain" in ingest(tmp_path, config, "r.json", data).error
    assert ingest(tmp_path, config, "r.json", data, org=acme).status == "stored"
    assert TlsReport.get().parse_warnings == ["policies is empty: the report counts no sessions"]


def test_a_broken_report_is_refused_beside_a_good_one_in_the_same_message(acme, tmp_path, config):
    message = tb.mail(b'{"organization-name": "x", "policies": []}', "application/tlsrpt+json",
                      "bad.json")
    result = ingest(tmp_path, config, "m.eml", message)
    assert result.status == "refused" and "TLS report: report-id is missing" in result.error
    assert TlsReport.select().count() == 0


def test_a_failure_report_is_refused_naming_it(acme, tmp_path, config):
    result = ingest(tmp_path, config, "ruf.eml", tb.failure_report_mail())
    assert result.status == "refused"
    assert result.error.endswith("a DMARC failure (forensic) report, not an aggregate or TLS "
                                 "report: rua does not store failure reports")


def test_an_attachment_marked_tlsrpt_holding_noise_is_refused_by_name(acme, tmp_path, config):
    result = ingest(tmp_path, config, "m.eml", tb.mail(b"\x00\x01noise" * 10))
    assert result.status == "refused" and "marked application/tlsrpt+gzip" in result.error


def test_a_report_over_the_size_limit_is_refused(acme, tmp_path, config):
    small = dataclasses.replace(config, max_report_bytes=200)
    result = ingest(tmp_path, small, "r.json", REPORT)
    assert result.status == "refused" and "limit" in result.error
