"""ingest/tls_report.py: RFC 8460 JSON read into plain values, each quirk kept as a warning."""
import json

import pytest

from ingest.model import ReportError
from ingest.tls_report import RESULT_TYPES, looks_like_tls_report, parse
from tests.ingest import tlsbuild as tb


def read(document: dict):
    return parse(json.dumps(document).encode(), "r.json")


def test_a_report_gives_its_reporter_period_and_sessions_by_policy():
    parsed = read(tb.report([
        tb.policy("example.com", 90, 10, {"certificate-expired": 4, "starttls-not-supported": 6}),
        tb.policy("example.com", 5, 0, policy_type="tlsa")]))
    assert (parsed.org_name, parsed.report_id, parsed.contact_info) == (
        "Example Sender", "tls-1", "tls@sender.example")
    assert (parsed.date_begin, parsed.date_end) == (1785542400, 1785628799)
    assert (parsed.successful, parsed.failed, parsed.domains) == (95, 10, ["example.com"])
    assert list(parsed.policies[0].failures.items()) == [("starttls-not-supported", 6),
                                                         ("certificate-expired", 4)]
    assert parsed.warnings == []
    assert json.loads(parsed.body)["report-id"] == "tls-1"


@pytest.mark.parametrize("change, warning", [
    (dict(start="2026-08-01T00:00:00"), "start-datetime has no time zone; read as UTC"),
    (dict(contact=None), "contact-info is missing"),
    (dict(policies=[]), "policies is empty"),
    (dict(policies=[tb.policy(policy_type="STS")]), "policy-type 'STS' is not lower-case"),
    (dict(policies=[tb.policy(**{"mx-host": "*.mail.example.com"})]), "mx-host is a string"),
    (dict(policies=[tb.policy(**{"policy-string": "version: STSv1"})]), "policy-string is a string"),
    (dict(policies=[tb.policy(failed=3, failures={"quantum-flux": 3})]),
     "result-type 'quantum-flux' is not one of RFC 8460's"),
    (dict(policies=[tb.policy(failed=7, failures={"certificate-expired": 5})]),
     "failure-details add up to 5 failed sessions, the summary says 7"),
])
def test_each_departure_is_read_and_kept_as_a_warning(change, warning):
    parsed = read(tb.report(**change))
    assert any(warning in text for text in parsed.warnings), parsed.warnings


def test_mx_host_as_a_list_is_no_departure_and_a_time_zone_offset_is_read():
    parsed = read(tb.report([tb.policy(**{"mx-host": ["*.mail.example.com"]})],
                            start="2026-08-01T02:00:00+02:00"))
    assert parsed.warnings == [] and parsed.date_begin == 1785542400


def test_counts_written_as_strings_are_read_with_a_warning():
    document = tb.report()
    document["policies"][0]["summary"] = {"total-successful-session-count": "42",
                                          "total-failure-session-count": "7"}
    parsed = read(document)
    assert (parsed.successful, parsed.failed) == (42, 7)
    assert len(parsed.warnings) == 2


def test_a_policy_without_a_domain_still_counts_but_routes_nothing():
    parsed = read(tb.report([tb.policy(""), tb.policy("Example.COM.", 1)]))
    assert parsed.domains == ["example.com"] and parsed.successful == 11
    assert any("has no policy-domain" in text for text in parsed.warnings)


@pytest.mark.parametrize("data, reason", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "not an object"),
    (b"\xff\xfe{}", "not UTF-8"),
    (json.dumps({"report-id": "x", "date-range": {}}).encode(), "organization-name is missing"),
    (json.dumps(tb.report(start="yesterday")).encode(), "is not a time"),
    (json.dumps(tb.report(start="2026-08-02T00:00:00Z")).encode(), "ends before it starts"),
    (json.dumps({**tb.report(), "policies": {}}).encode(), "policies is not a list"),
    (b"[" * 100000 + b"]" * 100000, "not valid JSON"),
])
def test_what_is_not_a_report_is_refused_with_one_line(data, reason):
    with pytest.raises(ReportError, match=reason):
        parse(data, "r.json")


def test_a_report_is_told_from_other_json_by_its_keys():
    assert looks_like_tls_report(tb.report_bytes())
    assert not looks_like_tls_report(b'{"name": "x", "policies": []}')
    assert not looks_like_tls_report(b"<feedback/>")
    assert len(RESULT_TYPES) == 11
