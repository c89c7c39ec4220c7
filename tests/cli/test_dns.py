"""`rua dns check`: checks now against the real test DNS server, stores what is monitored."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from store import db, snapshots
from store.models import Domain, Event
from tests.cli.outcome import assert_refused, ok
from tests.dnscheck.conftest import _dns_server_session, dns_config, dns_server  # noqa: F401
from tests.dnscheck.zones import REPORT_ADDRESS, serve
from tests.factories import make_domain, make_org

LINE_KEYS = {"domain", "checked_at", "dns", "dmarc_state", "tlsrpt_state", "forensic_state",
             "verified_source", "inherited_from", "spf_lookups"}


@pytest.fixture
def dns(database, dns_config):
    """Run `rua dns …` with the DNS settings pointed at the test server."""
    def invoke(*args, offline=False):
        env = {"RUA_DATABASE_URL": dns_config.database_url, "RUA_LOCK_DIR": dns_config.lock_dir,
               "RUA_DNS_NAMESERVERS": "127.0.0.1", "RUA_DNS_PORT": str(dns_config.dns_port),
               "RUA_DNS_TIMEOUT": str(dns_config.dns_timeout), "RUA_REPORT_ADDRESS": REPORT_ADDRESS,
               "RUA_DKIM_SELECTORS": "s1", "RUA_OFFLINE": "1" if offline else "0"}
        from cli import main
        result = CliRunner().invoke(main, ["dns", *args], env=env)
        db.initialize(database)     # the command pointed the shared proxy at its own connection
        return result
    return invoke


@pytest.fixture
def acme(database):
    org = make_org("Acme")
    make_domain(org, name="good.example")
    return org


def lines(result) -> list[dict]:
    return [json.loads(line) for line in ok(result)]


def test_json_is_one_object_per_domain_with_the_issues_fields_and_is_stored(dns, dns_server, acme):
    serve(dns_server, "good.example")
    [line] = lines(dns("check", "--format", "json"))
    assert set(line) == LINE_KEYS and line["domain"] == "good.example"
    assert line["dmarc_state"] == "verified" and line["spf_lookups"] == 0
    assert line["dns"]["dmarc"] == {"status": "ok", "details": line["dns"]["dmarc"]["details"]}
    row = Domain.get(Domain.name == "good.example")
    assert row.dmarc_state == "verified" and row.dns["dmarc"]["policy"] == "reject"
    # Refreshed at once: the health blob already carries the check.
    health = json.loads(snapshots.get(acme.id, "health", "good.example").body)
    assert health["dns"]["dmarc"]["status"] == "ok"


def test_a_domain_no_organization_monitors_is_checked_and_printed_not_stored(dns, dns_server, acme):
    serve(dns_server, "other.example")
    [line] = lines(dns("check", "--format", "json", "Other.Example."))
    assert line["domain"] == "other.example" and line["dns"]["spf"]["status"] == "ok"
    assert [d.name for d in Domain.select()] == ["good.example"]
    assert Domain.get(Domain.name == "good.example").dns is None


def test_org_limits_the_check_to_its_domains(dns, dns_server, acme):
    make_domain(make_org("Beta"), name="beta.example")
    serve(dns_server, "good.example")
    serve(dns_server, "beta.example")
    assert [x["domain"] for x in lines(dns("check", "--org", "Acme", "--format", "json"))] == [
        "good.example"]
    assert Domain.get(Domain.name == "beta.example").dns_checked_at is None


def test_given_domains_come_out_in_the_order_given(dns, dns_server, acme):
    serve(dns_server, "good.example")
    serve(dns_server, "a.example")
    out = lines(dns("check", "--format", "json", "good.example", "a.example"))
    assert [x["domain"] for x in out] == ["good.example", "a.example"]


def test_text_shows_each_kind_and_the_states(dns, dns_server, acme):
    serve(dns_server, "good.example", spf=None)
    out = ok(dns("check", "good.example"))
    assert out[0].startswith("good.example  (checked ")
    assert out[2].split()[:2] == ["spf", "error"] and "publishes no SPF record" in out[2]
    assert out[-1].startswith("  states: DMARC verified, TLS-RPT verified, forensic ")
    assert Event.get(Event.type == "dns_record_missing").domain == "good.example"


def test_offline_nothing_is_looked_up_or_stored_and_nothing_is_invented(dns, dns_server, acme):
    [line] = lines(dns("check", "--format", "json", offline=True))
    assert {v["status"] for v in line["dns"].values()} == {"unknown"}
    assert line["dmarc_state"] in ("unconfirmed", "pending") and line["spf_lookups"] is None
    assert dns_server.asked() == [] and Domain.get(Domain.name == "good.example").dns is None


def test_with_no_monitored_domain_it_says_so(dns, database):
    result = dns("check")
    assert result.exit_code == 0 and result.stdout == ""
    assert "no monitored domains to check" in result.stderr


def test_the_same_domain_written_twice_is_checked_once(dns, dns_server, acme):
    serve(dns_server, "good.example")
    assert len(lines(dns("check", "--format", "json", "good.example", "GOOD.example."))) == 1


@pytest.mark.parametrize("args, message", [
    (("check", "exa mple.com"), "invalid domain name"),
    (("check", "--org", "Nobody"), "no organization 'Nobody'"),
    (("check", "--format", "xml"), "unknown format 'xml'"),
])
def test_bad_input_is_one_clear_error(dns, acme, args, message):
    assert_refused(dns(*args), message)


def test_a_dead_resolver_is_found_once_and_said_in_one_line_with_status_1(dns, dns_server, acme):
    names = [f"d{n:02}.example" for n in range(48)]
    for name in names:
        make_domain(acme, name=name)
    dns_server.fault(".", "silent")           # the resolver answers nothing at all
    result = dns("check")
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line == "rua: error: resolver 127.0.0.1 did not answer: 49 domain(s) unknown " \
                   "(check RUA_DNS_NAMESERVERS or /etc/resolv.conf)"
    assert result.stdout == ""
    # Found out while the first domains waited: the ones started later asked nothing.
    asked = {name for name, _, _ in dns_server.asked()}
    assert "." in asked and not any(name.endswith("d47.example.") for name in asked)
    assert Domain.get(Domain.name == "d47.example").dns["dmarc"]["status"] == "unknown"
