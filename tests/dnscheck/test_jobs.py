"""Checking stored domains: results kept on the Domain row, events raised and cleared, budgets."""
from __future__ import annotations

import datetime
import json

import pytest

from dnscheck import jobs
from store.models import Domain, Event, Organization
from tests.dnscheck.zones import REPORT_ADDRESS, serve
from tests.factories import make_domain, make_org

NOW = datetime.datetime(2026, 3, 31, 12, 0, 0)
LATER = NOW + datetime.timedelta(hours=1)
EVEN_LATER = LATER + datetime.timedelta(hours=1)


@pytest.fixture
def check_config(dns_config):
    return dns_config.replace(report_address=REPORT_ADDRESS, dkim_selectors="default")


@pytest.fixture
def org(database):
    return make_org("Acme")


@pytest.fixture
def domain(org):
    return make_domain(org, name="good.example", dkim_selectors=["s1"])


def check(config, now=NOW, **kwargs):
    return jobs.check_stored(config, now=now, **kwargs)


def open_types(org):
    return sorted((e.type, e.dedupe_key) for e in Event.select().where(
        Event.org == org.id, Event.cleared_at.is_null()))


def test_a_check_is_stored_on_the_domain_with_its_states(dns_server, check_config, domain):
    serve(dns_server, "good.example")
    result = check(check_config)
    assert result.stored == 1 and [c.domain for c in result.checks] == ["good.example"]
    row = Domain.get_by_id(domain.id)
    assert row.dns["dmarc"]["status"] == "ok" and row.dns_checked_at == NOW
    assert (row.dmarc_state, row.verified_source, row.verified_at) == ("verified", "self", NOW)
    assert (row.tlsrpt_state, row.tlsrpt_enabled) == ("verified", True)
    assert Organization.get_by_id(domain.org_id).dirty_since == NOW
    assert open_types(domain.org) == []


def test_verified_at_is_when_it_became_verified_and_an_unchanged_check_marks_nothing(
        dns_server, check_config, domain):
    serve(dns_server, "good.example")
    check(check_config)
    Organization.update(dirty_since=None).execute()
    check(check_config, LATER)
    row = Domain.get_by_id(domain.id)
    assert (row.verified_at, row.dns_checked_at) == (NOW, LATER)
    assert Organization.get_by_id(domain.org_id).dirty_since is None


@pytest.mark.parametrize("broken, fixed, event", [
    ({"spf": None}, {}, "dns_record_missing:good.example:spf"),
    ({"dmarc": None}, {}, "dns_record_missing:good.example:dmarc"),
    ({"spf": "v=spf1 ip4:192.0.2.0/24 +all"}, {}, "dns_record_invalid:good.example:spf"),
    ({"dkim_bits": 1024}, {}, "weak_dkim_key:good.example"),
])
def test_a_record_problem_raises_its_event_once_and_the_fix_clears_it(
        dns_server, check_config, domain, broken, fixed, event):
    serve(dns_server, "good.example", **broken)
    check(check_config)
    check(check_config, LATER)
    assert event in [k for _, k in open_types(domain.org)]
    assert Event.select().where(Event.dedupe_key == event).count() == 1
    serve(dns_server, "good.example", **fixed)
    check(check_config, EVEN_LATER)
    assert open_types(domain.org) == []
    assert Event.get(Event.dedupe_key == event).cleared_at == EVEN_LATER


def test_two_dmarc_records_are_an_invalid_record(dns_server, check_config, domain):
    record = f"v=DMARC1; p=reject; rua=mailto:{REPORT_ADDRESS}"
    serve(dns_server, "good.example", extra=f'_dmarc IN TXT "{record}; pct=100"\n')
    check(check_config)
    key = "dns_record_invalid:good.example:dmarc"
    assert ("dns_record_invalid", key) in open_types(domain.org)
    assert Domain.get_by_id(domain.id).dmarc_state == "multiple_records"


def test_eleven_spf_lookups_raise_spf_lookup_limit_until_flattened(dns_server, check_config,
                                                                  domain):
    includes = " ".join(f"include:i{n}.good.example" for n in range(11))
    lines = "".join(f'i{n} IN TXT "v=spf1 -all"\n' for n in range(11))
    serve(dns_server, "good.example", spf=f"v=spf1 {includes} -all", extra=lines)
    check(check_config)
    assert ("spf_lookup_limit", "spf_lookup_limit:good.example") in open_types(domain.org)
    assert Domain.get_by_id(domain.id).dns["spf"]["lookups"] == 11
    serve(dns_server, "good.example", spf="v=spf1 include:i0.good.example -all", extra=lines)
    check(check_config, LATER)
    assert open_types(domain.org) == []


def test_leaving_verified_raises_verification_lost_and_verifying_again_clears_it(
        dns_server, check_config, domain):
    serve(dns_server, "good.example")
    check(check_config)
    serve(dns_server, "good.example", dmarc="v=DMARC1; p=reject; rua=mailto:d@good.example")
    check(check_config, LATER)
    row = Domain.get_by_id(domain.id)
    assert (row.dmarc_state, row.verified_at, row.verified_source) == (
        "published_not_ours", None, "")
    assert open_types(domain.org) == [("verification_lost", "verification_lost:good.example")]
    serve(dns_server, "good.example")
    check(check_config, EVEN_LATER)
    assert open_types(domain.org) == []
    assert Domain.get_by_id(domain.id).verified_at == EVEN_LATER


def test_dns_that_cannot_tell_neither_raises_nor_clears_nor_loses_verification(
        dns_server, check_config, domain):
    serve(dns_server, "good.example", spf=None)
    check(check_config)
    dns_server.fault("good.example", "silent")
    check(check_config, LATER)
    row = Domain.get_by_id(domain.id)
    assert row.dmarc_state == "unconfirmed" and row.verified_at == NOW
    assert open_types(domain.org) == [("dns_record_missing", "dns_record_missing:good.example:spf")]


def test_a_resolver_that_says_nxdomain_to_everything_raises_no_missing_record(
        dns_server, check_config, domain, caplog):
    dns_server.fault(".", "nxdomain")        # a broken or captive resolver
    result = check(check_config)
    said = "resolver 127.0.0.1 says no name exists, not even the root"
    assert result.unanswered.startswith(said)
    assert open_types(domain.org) == []
    assert Domain.get_by_id(domain.id).dmarc_state == "unconfirmed"
    assert any(said in message for message in caplog.messages)


def test_a_loss_or_a_change_across_a_check_that_could_not_tell_is_still_seen(
        dns_server, check_config, domain):
    serve(dns_server, "good.example")
    check(check_config)
    dns_server.fault("good.example", "silent")
    check(check_config, LATER)
    dns_server.reset()
    serve(dns_server, "good.example", dmarc="v=DMARC1; p=quarantine; rua=mailto:d@good.example")
    check(check_config, EVEN_LATER)
    assert [t for t, _ in open_types(domain.org)] == ["policy_changed", "verification_lost"]
    assert "from p=reject to p=quarantine" in Event.get(Event.type == "policy_changed").title


def test_a_changed_policy_raises_policy_changed_and_a_newer_change_replaces_it(
        dns_server, check_config, domain):
    serve(dns_server, "good.example")
    check(check_config)
    for at, policy in ((LATER, "quarantine"), (EVEN_LATER, "none")):
        record = f"v=DMARC1; p={policy}; rua=mailto:{REPORT_ADDRESS}"
        serve(dns_server, "good.example", dmarc=record)
        check(check_config, at)
    [event] = Event.select().where(Event.type == "policy_changed", Event.cleared_at.is_null())
    assert event.title == "DMARC policy of good.example changed from p=quarantine to p=none"
    assert Event.select().where(Event.type == "policy_changed").count() == 2


def test_a_name_two_organizations_monitor_is_checked_once_and_stored_for_both(
        dns_server, check_config, domain):
    other = make_domain(make_org("Beta"), name="good.example", dkim_selectors=["s1"])
    serve(dns_server, "good.example")
    result = check(check_config)
    assert (len(result.checks), result.stored) == (1, 2)
    assert Domain.get_by_id(other.id).dmarc_state == "verified"


def test_one_organizations_check_leaves_the_others_alone(dns_server, check_config, domain):
    beta = make_domain(make_org("Beta"), name="beta.example")
    serve(dns_server, "good.example")
    check(check_config, org_id=domain.org_id)
    assert Domain.get_by_id(beta.id).dns_checked_at is None


def test_past_the_budget_no_check_starts_and_the_domains_left_wait_oldest_first(
        dns_server, check_config, org):
    make_domain(org, name="checked.example", dns_checked_at=NOW)
    make_domain(org, name="new.example")
    result = check(check_config, budget=0)
    assert (result.checks, result.left) == ([], ["new.example", "checked.example"])
    assert Domain.select().where(Domain.dns_checked_at.is_null(False)).count() == 1


def test_unstored_checks_touch_no_row(dns_server, check_config, domain):
    serve(dns_server, "good.example")
    result = jobs.check_unstored(check_config, ["good.example"], now=NOW)
    assert result.stored == 0 and result.checks[0].states["dmarc_state"] == "verified"
    assert Domain.get_by_id(domain.id).dns is None and Event.select().count() == 0


def test_the_hourly_job_checks_then_refreshes_the_organizations_it_changed(
        dns_server, check_config, domain):
    from jobs.table import job_table
    from store import snapshots
    serve(dns_server, "good.example")
    [check_dns] = [job for name, job, _ in job_table(check_config) if name == "dns"]
    result = check_dns(NOW)
    assert [c.domain for c in result.checks] == ["good.example"]
    health = json.loads(snapshots.get(domain.org_id, "health", "good.example").body)
    assert health["dns"]["spf"]["status"] == "ok"
    assert Organization.get_by_id(domain.org_id).dirty_since is None


def test_the_hourly_job_does_nothing_offline(dns_server, check_config, domain):
    assert jobs.scheduled(NOW, check_config.replace(offline=True)) is None
    assert dns_server.asked() == [] and Domain.get_by_id(domain.id).dns_checked_at is None
