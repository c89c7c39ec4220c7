"""A TLS report is held to its caps while it is parsed, and what no store can keep is refused."""
import dataclasses
import io
import json
import tracemalloc

import pytest

from ingest.caps import Caps
from ingest.commits import Group
from ingest.deadline import Deadline
from ingest.model import Document, ReportError
from ingest.pipeline import FileResult, _ingest_one
from ingest.tls_report import MAX_WARNINGS, parse
from ingest.storing import DomainCaps
from store.models import TlsReport
from tests.factories import make_domain, make_org
from tests.ingest import tlsbuild as tb

CAPS = Caps.of()


def small(**caps) -> Caps:
    return dataclasses.replace(CAPS, **caps)


def refusal(data: bytes, caps: Caps = CAPS) -> str:
    with pytest.raises(ReportError) as caught:
        parse(data, "r.json", caps)
    return str(caught.value)


@pytest.mark.parametrize("caps, data, reason", [
    (small(tls_policies=3), tb.report_bytes([tb.policy()] * 4),
     "more than 3 policies (RUA_MAX_TLS_POLICIES)"),
    (small(failure_details=2), tb.report_bytes([tb.policy(failed=3, failures=tb.kinds(3))]),
     "more than 2 failure details in one policy (RUA_MAX_FAILURE_DETAILS)"),
    (small(result_types=4), tb.report_bytes([tb.policy(failures=tb.kinds(3)),
                                             tb.policy(failures=tb.kinds(2, start=3))]),
     "more than 4 distinct result types (RUA_MAX_RESULT_TYPES)"),
    (small(mx_hosts=2), tb.report_bytes([tb.policy(**{"mx-host": ["a", "b", "c"]})]),
     "more than 2 mx-host entries in one policy (RUA_MAX_MX_HOSTS)"),
    (small(policy_strings=1), tb.report_bytes([tb.policy(**{"policy-string": ["a", "b"]})]),
     "more than 1 policy-string entries in one policy (RUA_MAX_POLICY_STRINGS)"),
    (small(tls_values=20), tb.report_bytes([tb.policy()] * 3),
     "more than 20 JSON values (RUA_MAX_TLS_VALUES)"),
])
def test_a_report_over_a_cap_is_refused_naming_the_cap_and_its_setting(caps, data, reason):
    assert refusal(data, caps) == f"TLS report: {reason}"


def test_result_types_written_as_numbers_count_as_distinct_types():
    details = [{"result-type": n, "failed-session-count": 1} for n in range(5)]
    entry = {**tb.policy(failed=5), "failure-details": details}
    assert refusal(tb.report_bytes([entry]), small(result_types=4)) == (
        "TLS report: more than 4 distinct result types (RUA_MAX_RESULT_TYPES)")


def test_a_report_at_its_caps_is_read():
    data = tb.report_bytes([tb.policy(failed=3, failures=tb.kinds(3))] * 3)
    caps = small(tls_policies=3, failure_details=3, result_types=3)
    assert len(parse(data, "r.json", caps).policies) == 3


def test_a_million_policies_are_refused_before_any_is_built():
    data = tb.report_bytes([{}] * 1_000_000, indent=None)
    parse(tb.report_bytes(), "warm.json")        # lazy imports and caches, once
    tracemalloc.start()
    try:
        assert refusal(data) == "TLS report: more than 1,000,000 JSON values (RUA_MAX_TLS_VALUES)"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Building them would take hundreds of megabytes; even the text decoded would take 3 MB.
    assert peak < 1024 * 1024


@pytest.mark.parametrize("sessions", [{"successful": 2 ** 62}, {"failed": 2 ** 62 - 1},
                                      {"successful": 2_000_000_000, "failed": 2_000_000_001}])
def test_a_report_counting_more_sessions_than_the_cap_is_refused(sessions):
    data = tb.report_bytes([tb.policy(**sessions)])
    assert refusal(data) == ("TLS report: more than 4,000,000,000 sessions "
                             "(RUA_MAX_REPORT_SESSIONS)")


def test_failure_details_counting_more_sessions_than_the_cap_are_refused():
    data = tb.report_bytes([tb.policy(failed=1, failures={"certificate-expired": 2 ** 40})])
    assert "(RUA_MAX_REPORT_SESSIONS)" in refusal(data)


@pytest.mark.parametrize("text, reason", [
    ('{"x": NaN}', "NaN is not a number JSON allows (RFC 8259)"),
    ('{"x": Infinity}', "Infinity is not a number JSON allows (RFC 8259)"),
    ('{"x": [-Infinity]}', "-Infinity is not a number JSON allows (RFC 8259)"),
    ('{"x": 1e400}', "the number 1e400 is too large for a 64-bit float"),
    ('{"x": 9223372036854775808}', "the number 9223372036854775808 is too large for a "
                                   "64-bit integer"),
    ('{"x": "\\ud800"}', "a string holds a lone surrogate (such as \\ud800), which is no "
                         "character"),
    ('{"x": ["a\\u0000b"]}', "a string holds a NUL character (\\u0000)"),
])
def test_what_no_store_can_keep_is_refused_with_its_reason(text, reason):
    document = tb.report_bytes()[:-1] + b", " + text[1:].encode()
    assert refusal(document) == f"TLS report: {reason}"


def test_an_escaped_backslash_before_u0000_is_no_nul():
    document = tb.report(org_name="back\\u0000slash")
    assert parse(json.dumps(document).encode(), "r.json").org_name == "back\\u0000slash"


@pytest.mark.parametrize("start, end", [("1969-12-31T23:59:59Z", "2026-08-01T00:00:00Z"),
                                        ("2026-08-01T00:00:00Z", "9999-12-31T23:59:59-01:00")])
def test_a_time_outside_1970_to_9999_is_refused(start, end):
    reason = refusal(tb.report_bytes(start=start, end=end))
    assert reason.startswith("TLS report: date-range ") and "between 1970 and 9999" in reason


def test_the_body_is_kept_compact_without_the_padding_it_came_with():
    data = json.dumps(tb.report(), indent=4096).encode()
    parsed = parse(data, "r.json")
    assert json.loads(parsed.body) == tb.report() and len(parsed.body) * 100 < len(data)


def test_a_number_in_exponent_form_is_kept_as_written_when_shorter():
    data = b'{"x": [' + b",".join([b"1e15"] * 100) + b"]," + tb.report_bytes(indent=None)[1:]
    assert len(parse(data, "r.json").body) <= len(data)


def test_warnings_are_kept_to_a_bounded_list():
    data = tb.report_bytes([{"policy": {}}] * 100)
    warnings = parse(data, "r.json").warnings
    assert len(warnings) == MAX_WARNINGS + 1 and warnings[-1].startswith("and ")


def test_a_tls_report_parsed_past_the_message_budget_is_refused(database, config):
    make_domain(make_org("Acme"), "example.com")
    data = tb.report_bytes()
    ticks = iter([0] + [10] * 10)       # the deadline is set at 0 and has passed once parsed
    budget = Deadline(5, clock=lambda: next(ticks))
    item = Document("r.json", lambda: io.BytesIO(data), kind="tlsrpt")
    result = FileResult("r.json")
    assert _ingest_one(item, result, None, config, Group(), DomainCaps.of(config),
                       budget) == "refused"
    assert result.refusals == ["r.json: its 5-second budget is spent (RUA_MAX_MESSAGE_SECONDS)"]
    assert TlsReport.select().count() == 0


def test_a_count_in_digits_other_than_ascii_is_no_count():
    data = tb.report_bytes([tb.policy(successful="\u00b2", failed="\u0663")])
    assert parse(data, "r.json").successful == 0
