"""Routing by domain reads the domains through their name index (migration 11), at any size."""
from ingest import routing
from tests.factories import make_domain, make_org
from tests.store.test_report_plans import plan


def test_the_monitoring_organizations_are_found_by_the_domain_name_index(database):
    make_domain(make_org(), "example.com")
    found = plan(routing._MONITORING.build(name="example.com"))
    assert "domain_name" in found.indexes
    assert "name" in found.seeks


def test_a_report_for_a_subdomain_falls_back_to_its_organizational_domain(database):
    org = make_org()
    make_domain(org, "example.co.uk")
    assert routing.route("mail.example.co.uk").id == org.id
