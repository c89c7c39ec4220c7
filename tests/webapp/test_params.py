"""Query strings to typed values, exactly per the contract (plain values, no HTTP)."""
from __future__ import annotations

from datetime import date

import pytest

from webapp import params
from webapp.errors import ApiError


def _raises(code, fn, *args, **kwargs):
    with pytest.raises(ApiError) as caught:
        fn(*args, **kwargs)
    assert (caught.value.status, caught.value.code) == (400, code)


@pytest.mark.parametrize("args, expected", [
    ({}, (50, 0)),
    ({"limit": "20", "offset": "40"}, (20, 40)),
    ({"limit": "200"}, (200, 0)),
    ({"limit": "201"}, (200, 0)),
    ({"limit": "99999999999999999999999"}, (200, 0)),
    ({"limit": "0"}, (50, 0)),
    ({"limit": "-5"}, (50, 0)),
    ({"limit": "ten"}, (50, 0)),
    ({"limit": "1.5"}, (50, 0)),
    ({"limit": ""}, (50, 0)),
    ({"limit": "٣"}, (50, 0)),                 # a non-ASCII digit is not a number here
    ({"offset": "-1"}, (50, 0)),
    ({"offset": "x"}, (50, 0)),
    ({"offset": "1000000"}, (50, 1000000)),
    ({"offset": "9" * 30}, (50, params.MAX_OFFSET)),
])
def test_limit_and_offset_follow_the_shared_paging_rules(args, expected):
    assert params.page(args) == expected


def test_top_sources_pages_default_to_ten():
    assert params.page({}, default=10) == (10, 0)
    assert params.page({"limit": "500"}, default=10) == (200, 0)


@pytest.mark.parametrize("value, expected", [
    ("2024-01-05", date(2024, 1, 5)), ("2024-02-29", date(2024, 2, 29)), ("1970-01-01", date(1970, 1, 1))])
def test_a_real_calendar_day_is_read(value, expected):
    assert params.day({"from": value}, "from") == expected


@pytest.mark.parametrize("value", ["2024-02-30", "20240105", "2024-1-5", "2023-02-29", "", "yesterday",
                                   "2024-01-05T00:00:00", "2024-13-01", "٢٠٢٤-٠١-٠٥", " 2024-01-05"])
def test_a_date_that_is_not_a_real_yyyy_mm_dd_is_invalid_date(value):
    _raises("invalid_date", params.day, {"to": value}, "to")


def test_an_absent_date_is_none():
    assert params.day({}, "from") is None


@pytest.mark.parametrize("value, expected", [
    ("example.com", "example.com"), ("Example.COM", "example.com"), ("example.com.", "example.com"),
    ("mail.example.co.uk", "mail.example.co.uk"), ("bücher.example", "xn--bcher-kva.example"),
    ("a" * 63 + ".com", "a" * 63 + ".com")])
def test_a_domain_is_read_in_its_normal_form(value, expected):
    assert params.domain(value) == expected


@pytest.mark.parametrize("value", ["", "localhost", "exa mple.com", "-bad.com", "a" * 64 + ".com",
                                   ".".join(["abcdefghi"] * 26) + ".com", "192.168.0.1", "ex_ample.com",
                                   "example..com", "*.example.com"])
def test_an_invalid_domain_name_is_invalid_domain(value):
    _raises("invalid_domain", params.domain, value)


def test_an_absent_domain_is_none_and_a_present_one_is_checked():
    assert params.optional_domain({}) is None
    _raises("invalid_domain", params.optional_domain, {"domain": "nope"})


@pytest.mark.parametrize("value, expected", [
    ("01HQ3Z7K8V9W0X1Y2Z3A4B5C6D", "01HQ3Z7K8V9W0X1Y2Z3A4B5C6D"),
    ("01hq3z7k8v9w0x1y2z3a4b5c6d", "01HQ3Z7K8V9W0X1Y2Z3A4B5C6D")])
def test_an_id_is_a_ulid_and_lower_case_is_accepted(value, expected):
    assert params.ulid(value) == expected


@pytest.mark.parametrize("value", ["", "123", "01HQ3Z7K8V9W0X1Y2Z3A4B5C6", "01HQ3Z7K8V9W0X1Y2Z3A4B5C6DX",
                                   "01HQ3Z7K8V9W0X1Y2Z3A4B5C6I", "81HQ3Z7K8V9W0X1Y2Z3A4B5C6D",
                                   "01HQ3Z7K8V9W0X1Y2Z3A4B5C-D"])
def test_anything_else_is_invalid_id(value):
    _raises("invalid_id", params.ulid, value)


@pytest.mark.parametrize("args, strict, expected", [
    ({}, False, 30), ({"days": "7"}, False, 7), ({"days": "365"}, False, 365),
    ({"days": "366"}, False, 30), ({"days": "0"}, False, 30), ({"days": "x"}, False, 30),
    ({"days": "90"}, True, 90), ({}, True, 30)])
def test_days_windows_fall_back_to_the_default_unless_strict(args, strict, expected):
    hi = 90 if strict else 365
    assert params.days(args, 30, 1, hi, strict) == expected


@pytest.mark.parametrize("value", ["0", "91", "-1", "x", ""])
def test_strict_days_outside_the_range_is_invalid_days(value):
    _raises("invalid_days", params.days, {"days": value}, 30, 1, 90, True)


@pytest.mark.parametrize("args, expected", [
    ({}, "date_end"), ({"sort_by": "domain"}, "domain"), ({"sort_by": "DOMAIN"}, "domain"),
    ({"sort_by": "id; drop table"}, "date_end"), ({"sort_by": ""}, "date_end")])
def test_an_unknown_choice_falls_back_to_the_default(args, expected):
    assert params.choice(args, "sort_by", ("date_end", "domain"), "date_end") == expected


def test_search_terms_are_cut_to_100_characters():
    assert params.search({"search": "x" * 150}) == "x" * 100
    assert params.search({"search": ""}) is None


@pytest.mark.parametrize("value", ["192.0.2.1", "2001:db8::1", "::ffff:192.0.2.1"])
def test_an_ip_address_is_returned_as_given(value):
    assert params.ip(value) == value


@pytest.mark.parametrize("value", ["", "192.0.2", "192.0.2.256", "example.com", "2001:db8:::1"])
def test_anything_else_is_invalid_ip(value):
    _raises("invalid_ip", params.ip, value)


@pytest.mark.parametrize("value, expected", [
    ("true", True), ("false", False), ("TRUE", True), ("0", False), ("maybe", None), (None, None)])
def test_booleans(value, expected):
    assert params.boolean({} if value is None else {"f": value}, "f") is expected


def test_a_nul_in_a_text_filter_can_match_nothing_and_never_reaches_the_database():
    assert params.text({"org": "a\x00b"}, "org") == "a\ufffdb"
    assert params.search({"search": "\x00"}) == "\ufffd"
