"""Alignment of auth domains with the From domain, and the failure summary, from plain values."""
import pytest

from rules.alignment import aligned, failure_summary, record_alignment
from ingest.model import ParsedRecord


@pytest.mark.parametrize("auth_domain, header_from, mode, expected", [
    ("example.com", "example.com", "s", True),
    ("example.com", "example.com", "r", True),
    ("mail.example.com", "example.com", "s", False),
    ("mail.example.com", "example.com", "r", True),
    ("example.com", "news.example.com", "r", True),
    ("a.example.com", "b.example.com", "r", True),
    ("a.example.com", "b.example.com", "s", False),
    ("example.net", "example.com", "r", False),
    ("shop.example.co.uk", "example.co.uk", "r", True),
    ("other.co.uk", "example.co.uk", "r", False),
    ("co.uk", "example.co.uk", "r", False),
    ("a.github.io", "b.github.io", "r", False),
    ("EXAMPLE.com.", "example.COM", "s", True),
    ("mail.example.com", "example.com", "", True),
    ("mail.example.com", "example.com", None, True),
    ("", "example.com", "r", False),
    (None, "example.com", "r", False),
    ("example.com", "", "r", False),
])
def test_strict_needs_the_same_name_and_relaxed_the_same_organizational_domain(
        auth_domain, header_from, mode, expected):
    assert aligned(auth_domain, header_from, mode) is expected


def rec(dkim="pass", spf="pass", header_from="example.com", auth_dkim=None, auth_spf=None):
    return ParsedRecord(source_ip="192.0.2.1", count=1, disposition="none", dkim=dkim, spf=spf,
                        reasons=None, envelope_to="", envelope_from="", header_from=header_from,
                        auth_dkim=auth_dkim, auth_spf=auth_spf)


def test_record_alignment_judges_each_auth_result_whatever_its_result():
    record = rec(auth_dkim=[{"Domain": "example.com", "Result": "fail"},
                            {"Domain": "esp.example", "Result": "pass"},
                            {"Domain": "mail.example.com", "Result": "pass"}],
                 auth_spf=[{"Domain": "bounce.example.com", "Result": "pass"}])
    assert record_alignment(record, "r", "s") == {"dkim": [True, False, True], "spf": [False]}
    assert record_alignment(record, "s", "r") == {"dkim": [True, False, False], "spf": [True]}


def test_missing_auth_results_give_null_not_an_empty_list():
    assert record_alignment(rec(), "r", "r") == {"dkim": None, "spf": None}


@pytest.mark.parametrize("verdicts, expected", [
    ([], {"spf_only": 0, "dkim_only": 0, "both": 0, "total": 0}),
    ([("pass", "pass")], {"spf_only": 0, "dkim_only": 0, "both": 0, "total": 1}),
    ([("pass", "fail")], {"spf_only": 1, "dkim_only": 0, "both": 0, "total": 1}),
    ([("fail", "pass")], {"spf_only": 0, "dkim_only": 1, "both": 0, "total": 1}),
    ([("fail", "fail")], {"spf_only": 0, "dkim_only": 0, "both": 1, "total": 1}),
    ([("pass", "fail"), ("fail", "fail"), ("fail", "pass"), ("pass", "pass"), ("fail", "fail")],
     {"spf_only": 1, "dkim_only": 1, "both": 2, "total": 5}),
])
def test_failure_summary_buckets_records_by_policy_evaluated(verdicts, expected):
    assert failure_summary([rec(dkim=d, spf=s) for d, s in verdicts]) == expected
