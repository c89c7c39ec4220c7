"""A request never rebuilds its organization: a stale or missing body is computed alone."""
from datetime import timedelta

from store import snapshots
from store.models import Domain, Organization, Snapshot
from snapshotter import jobs
from tests.factories import make_domain
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.webapp.helpers import get

LATER = NOW + timedelta(hours=2)      # past every kind's tolerance


def stamps(org) -> dict:
    return {(k, v): at for k, v, at in Snapshot.select(Snapshot.kind, Snapshot.variant,
                                                       Snapshot.computed_at)
            .where(Snapshot.org == org.id).tuples()}


def a_busy_org(org, clock, domains=30):
    """An organization refreshed at NOW, then a report on each of `domains` subdomains."""
    clock.now = NOW
    report_on(org, "example.com", TODAY, [{"count": 5}])
    jobs.refresh_org(org.id, NOW)
    for n in range(domains):
        report_on(org, f"s{n}.example.com", TODAY, [{"count": 1}])
    Organization.update(dirty_since=NOW + timedelta(minutes=1)).where(
        Organization.id == org.id).execute()
    clock.now = LATER
    return stamps(org)


def changed(before: dict, after: dict) -> set:
    return {key for key, at in after.items() if before.get(key) != at}


def test_a_stale_health_is_computed_alone(client, org, key, clock):
    before = a_busy_org(org, clock)
    body = get(client, "/domains/example.com/health", key).get_json()
    assert body["computed_at"] == "2026-03-31T14:00:00Z" and body["total_messages"] == 5
    assert changed(before, stamps(org)) == {("health", "example.com")}
    # The organization is still the snapshotter's to refresh.
    assert Organization.get_by_id(org.id).dirty_since is not None


def test_a_new_domains_health_is_computed_alone_among_many_auto_domains(client, org, key, clock):
    before = a_busy_org(org, clock)
    Domain.update(source="auto").where(Domain.name == "s7.example.com").execute()
    make_domain(org, "new.example")
    body = get(client, "/domains/new.example/health", key).get_json()
    assert body["domain"] == "new.example" and body["grade"] == "N/A"
    assert changed(before, stamps(org)) == {("health", "new.example")}
    body = get(client, "/domains/s7.example.com/health", key).get_json()
    assert body["total_messages"] == 1


def test_a_stale_overview_is_computed_alone_from_the_per_domain_facts(client, org, key, clock):
    before = a_busy_org(org, clock)
    body = get(client, "/dashboard/overview", key).get_json()
    assert body["org_health"]["total_messages"] == 35 and len(body["domain_cards"]) == 31
    # The overview, and the day totals it summed (kept for the next refresh), nothing else.
    assert changed(before, stamps(org)) == {("overview", ""), ("day_totals", "")}
    assert snapshots.get(org.id, "health", "s3.example.com") is None


def test_domain_variants_are_computed_alone(client, org, key, clock):
    before = a_busy_org(org, clock)
    score = get(client, "/compliance-score?domain=s3.example.com", key).get_json()
    assert score["total_messages"] == 1
    trend = get(client, "/trends?domain=s3.example.com&days=1", key).get_json()
    assert trend["points"][-1]["total_messages"] == 1
    assert changed(before, stamps(org)) == {("compliance", "s3.example.com"),
                                            ("trends", "s3.example.com")}


def test_the_body_computed_alone_is_the_one_the_snapshotter_makes(client, org, key, clock):
    a_busy_org(org, clock)
    paths = {("health", "example.com"): "/domains/example.com/health",
             ("overview", ""): "/dashboard/overview",
             ("compliance", "s3.example.com"): "/compliance-score?domain=s3.example.com",
             ("compliance", ""): "/compliance-score"}
    alone = {k: get(client, p, key).get_data() for k, p in paths.items()}
    jobs.refresh_org(org.id, LATER)
    assert alone == {k: snapshots.get(org.id, *k).body for k in paths}
