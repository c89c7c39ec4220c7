"""`rua domain add|list|remove`: one normal form, and the manual/auto/both sources."""
from __future__ import annotations

import datetime

import pytest

from store.models import Domain
from tests.cli.outcome import assert_refused, ok
from tests.factories import make_domain, make_org


@pytest.mark.parametrize("typed, stored", [("Example.COM.", "example.com"),
                                            ("bücher.example", "xn--bcher-kva.example"),
                                            ("straße.de", "xn--strae-oqa.de"),
                                            ("faß.de", "xn--fa-hia.de")])
def test_domain_add_stores_the_normal_form_as_manual(rua, acme, typed, stored):
    assert ok(rua("domain", "add", "Acme", typed)) == [f"{stored} (manual) in Acme"]
    assert [(d.name, d.source) for d in Domain.select()] == [(stored, "manual")]


def test_straße_and_strasse_are_two_domains(rua, acme):
    ok(rua("domain", "add", "Acme", "strasse.de"))
    ok(rua("domain", "add", "Acme", "straße.de"))
    assert sorted(d.name for d in Domain.select()) == ["strasse.de", "xn--strae-oqa.de"]


def test_a_name_idna_2008_refuses_is_one_line(rua, acme):
    assert_refused(rua("domain", "add", "Acme", "☃.com"), "not a valid internationalized")


def test_adding_a_domain_its_reports_introduced_makes_it_both(rua, acme):
    make_domain(acme, name="example.com", source="auto")
    ok(rua("domain", "add", "Acme", "EXAMPLE.com"))
    assert [(d.name, d.source) for d in Domain.select()] == [("example.com", "both")]


@pytest.mark.parametrize("source", ["manual", "both"])
def test_adding_a_domain_twice_is_refused(rua, acme, source):
    make_domain(acme, name="example.com", source=source)
    assert_refused(rua("domain", "add", "Acme", "example.com"), "already monitored by Acme")
    assert [d.source for d in Domain.select()] == [source]


@pytest.mark.parametrize("name", ["exa mple.com", "localhost", "bad-.example", "192.0.2.1", "a..b"])
def test_domain_add_refuses_an_invalid_name(rua, acme, name):
    assert_refused(rua("domain", "add", "Acme", name), "invalid domain name")
    assert Domain.select().count() == 0


def test_domain_add_refuses_an_unknown_org(rua):
    assert_refused(rua("domain", "add", "Nobody", "example.com"), "no organization 'Nobody'")


def test_the_same_domain_may_be_monitored_by_two_organizations(rua, acme):
    make_domain(make_org("Beta"), name="example.com")
    ok(rua("domain", "add", "Acme", "example.com"))
    assert Domain.select().count() == 2


def test_domain_list_shows_name_source_the_three_states_and_the_last_check(rua, acme):
    make_domain(acme, name="b.example", source="auto", dmarc_state="verified_inherited",
                tlsrpt_state="not_published", forensic_state="published_not_ours",
                verified_source="inherited", inherited_from="example",
                dns_checked_at=datetime.datetime(2026, 3, 1, 12, 0, 5))
    make_domain(acme, name="a.example")
    make_domain(make_org("Beta"), name="c.example")
    assert [line.split() for line in ok(rua("domain", "list", "Acme"))] == [
        ["DOMAIN", "SOURCE", "DMARC", "TLS-RPT", "FORENSIC", "DNS", "CHECKED"],
        ["a.example", "manual", "pending", "pending", "pending", "never"],
        ["b.example", "auto", "verified_inherited", "not_published", "published_not_ours",
         "2026-03-01T12:00:05Z", "(through", "example)"]]


@pytest.mark.parametrize("source", ["manual", "auto"])
def test_domain_remove_deletes_a_single_source_domain(rua, acme, source):
    make_domain(acme, name="example.com", source=source)
    assert ok(rua("domain", "remove", "Acme", "Example.com")) == ["removed example.com from Acme"]
    assert Domain.select().count() == 0


def test_removing_a_both_domain_leaves_it_as_auto(rua, acme):
    make_domain(acme, name="example.com", source="both")
    ok(rua("domain", "remove", "Acme", "example.com"))
    assert [d.source for d in Domain.select()] == ["auto"]


def test_removing_an_unmonitored_domain_is_refused(rua, acme):
    make_domain(make_org("Beta"), name="example.com")
    assert_refused(rua("domain", "remove", "Acme", "example.com"), "Acme does not monitor example.com")
    assert Domain.select().count() == 1


def test_adding_or_removing_a_domain_marks_the_organization_for_the_snapshotter(rua, acme):
    from store.models import Organization
    for command in (["domain", "add", "Acme", "dirty.example"],
                    ["domain", "remove", "Acme", "dirty.example"]):
        Organization.update(dirty_since=None).execute()
        assert rua(*command).exit_code == 0
        assert Organization.get(Organization.name == "Acme").dirty_since is not None
