"""The pages' own parameters: the charts' days, a DNS record kind, where to go after sign-in."""
from __future__ import annotations

import pytest

from webapp.pages import params


@pytest.mark.parametrize("target, went", [
    ("/domains/example.com?days=90", "/domains/example.com?days=90"),
    ("/", "/"),
    ("//evil.example/x", "/"),
    ("/\\evil.example", "/"),
    ("https://evil.example/", "/"),
    ("javascript:alert(1)", "/"),
    ("/reports\r\nSet-Cookie: x=1", "/"),
    ("", "/"),
    (None, "/"),
])
def test_only_a_path_on_this_site_is_followed_after_signing_in(target, went):
    assert params.local_path(target) == went


@pytest.mark.parametrize("given, days", [(None, 30), ("90", 90), ("365", 365), ("7", 30),
                                         ("x", 30), ("-1", 30)])
def test_charts_cover_30_90_or_365_days(given, days):
    assert params.chart_days({} if given is None else {"days": given}) == days


def test_a_record_kind_is_one_the_dns_check_knows():
    assert params.record_kind({"record": "MTA_STS"}) == "mta_sts"
    assert params.record_kind({"record": "cname"}) is None
