"""GET /domains: the organization's monitored domains in the contract's shape, paged."""
from __future__ import annotations

from datetime import datetime

import pytest

from tests.factories import make_domain, make_org, make_tls_report
from tests.ingest.tlsbuild import policy
from tests.webapp.helpers import get


def test_a_domain_has_every_field_of_the_contract(client, org, key):
    row = make_domain(org, "example.com")
    body = get(client, "/domains", key).get_json()
    assert body == {"domains": [{
        "id": row.id, "domain": "example.com", "verified": False, "dmarc_state": "pending",
        "tlsrpt_enabled": False, "tlsrpt_state": "pending", "forensic_enabled": False,
        "forensic_state": "pending", "source": "manual", "verified_source": "",
        "report_count": 0, "tls_report_count": 0, "verified_at": None}], "total": 1, "limit": 50,
        "offset": 0}


def test_tls_report_count_counts_the_tls_reports_naming_the_domain(client, org, key):
    make_domain(org, "example.com")
    make_domain(org, "example.org")
    make_tls_report(org, [policy("example.com"), policy("example.com", policy_type="tlsa")])
    make_tls_report(org, [policy("example.com"), policy("example.net")], report_id="t-2")
    counts = {d["domain"]: d["tls_report_count"] for d in get(client, "/domains", key).get_json()["domains"]}
    assert counts == {"example.com": 2, "example.org": 0}


def test_a_domain_verified_through_its_parent_names_the_parent(client, org, key):
    make_domain(org, "mail.example.com", dmarc_state="verified_inherited", verified_source="inherited",
                inherited_from="example.com", verified_at=datetime(2025, 3, 1, 8, 30))
    (domain,) = get(client, "/domains", key).get_json()["domains"]
    assert domain["verified"] is True
    assert (domain["verified_source"], domain["inherited_from"]) == ("inherited", "example.com")
    assert domain["verified_at"] == "2025-03-01T08:30:00Z"


def test_inherited_from_is_absent_unless_verification_is_inherited(client, org, key):
    make_domain(org, "example.com", dmarc_state="verified", verified_source="self")
    (domain,) = get(client, "/domains", key).get_json()["domains"]
    assert domain["verified_source"] == "self" and "inherited_from" not in domain


def test_an_unverified_domain_has_an_empty_verified_source(client, org, key):
    make_domain(org, "example.com", dmarc_state="not_published", verified_source="self")
    (domain,) = get(client, "/domains", key).get_json()["domains"]
    assert domain["verified"] is False and domain["verified_source"] == ""


def test_domains_of_another_organization_are_never_listed(client, org, key):
    make_domain(make_org(), "stranger.example")
    assert get(client, "/domains", key).get_json() == {"domains": [], "total": 0, "limit": 50, "offset": 0}


@pytest.mark.parametrize("query, names, limit, offset", [
    ("?limit=2", ["a.example", "b.example"], 2, 0),
    ("?limit=2&offset=2", ["c.example", "d.example"], 2, 2),
    ("?limit=2&offset=4", ["e.example"], 2, 4),
    ("?offset=99", [], 50, 99),
    ("?limit=0&offset=-3", ["a.example", "b.example", "c.example", "d.example", "e.example"], 50, 0)])
def test_domains_are_paged_by_name_with_total_limit_and_offset(client, org, key, query, names, limit, offset):
    for name in ["d.example", "b.example", "e.example", "a.example", "c.example"]:
        make_domain(org, name)
    body = get(client, "/domains" + query, key).get_json()
    assert [d["domain"] for d in body["domains"]] == names
    assert (body["total"], body["limit"], body["offset"]) == (5, limit, offset)


def test_the_domain_list_runs_a_bounded_number_of_queries(client, org, key, count_queries):
    for n in range(30):
        make_domain(org, f"d{n}.example")
    get(client, "/enums", key)                       # the key is known and touched
    before = count_queries.count
    get(client, "/domains?limit=10", key)
    assert count_queries.count - before <= 5         # page, total, version, counts, TLS counts
    before = count_queries.count
    get(client, "/domains?limit=10", key)
    assert count_queries.count - before <= 4         # the DMARC counts are remembered


def test_report_count_counts_reports_whose_policy_domain_is_exactly_the_domain(client, org, key):
    from tests.factories import make_report
    make_domain(org, "example.com")
    for _ in range(3):
        make_report(org, "example.com")
    make_report(org, "mail.example.com")
    make_report(make_org(), "example.com")
    counts = {d["domain"]: (d["report_count"], d["source"]) for d in get(client, "/domains", key).get_json()["domains"]}
    assert counts == {"example.com": (3, "both"), "mail.example.com": (1, "auto")}
