"""`rua sources refresh` and the scheduler's job: enrichment against the real test DNS server,
stored on Source rows, with verdicts, re-classified records and events that agree with it."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner

from sources import jobs
from sources.enrich import Signals
from store import db, events
from store.addresses import canonical_ip
from store.clock import from_epoch, utcnow
from store.models import DailyRollup, Event, Record, Report, Source, SourceDomain
from tests.cli.outcome import assert_refused, ok
from tests.dnscheck.conftest import _dns_server_session, dns_config, dns_server  # noqa: F401
from tests.factories import make_domain, make_org, make_report
from tests.sources.test_geo import write
from tests.sources.zones import dnsbl_lines, ptr_lines, reverse_origin
from tests.webapp.helpers import detail_at_once

V4 = reverse_origin("198.51.100.0/24")
SES, OWN, LISTED, FORWARDER, SPOOF = ("198.51.100.20", "198.51.100.40", "198.51.100.66",
                                      "198.51.100.50", "198.51.100.30")
ZONES = "bl.spamcop.net,psbl.surriel.com,zen.spamhaus.org"
FAILED = {"dkim": "fail", "spf": "fail"}
UNSIGNED_SES = {**FAILED, "auth_dkim": None,
                "auth_spf": [{"Domain": "amazonses.com", "Scope": "mfrom", "Result": "pass",
                              "HumanResult": ""}]}
RESIGNED = {**FAILED, "auth_spf": None,
            "auth_dkim": [{"Domain": "forwardemail.net", "Selector": "s", "Result": "pass",
                           "HumanResult": ""}]}


@pytest.fixture
def world(dns_server, dns_config, tmp_path):
    dns_server.zone(V4, ptr_lines(V4, {SES: "a8-1.smtp-out.amazonses.com",
                                       LISTED: "host66.dynamic.isp.example",
                                       FORWARDER: "mx1.forwardemail.net",
                                       SPOOF: "mail.google.com"}))
    dns_server.zone("amazonses.com", f"a8-1.smtp-out IN A {SES}\n")
    dns_server.zone("isp.example", f"host66.dynamic IN A {LISTED}\n")
    dns_server.zone("forwardemail.net", f"mx1 IN A {FORWARDER}\n")
    dns_server.zone("google.com", "mail IN A 192.0.2.1\n")
    dns_server.zone("bl.spamcop.net", dnsbl_lines({LISTED: "127.0.0.2"}, ipv6=False))
    dns_server.zone("psbl.surriel.com", dnsbl_lines({LISTED: "127.0.0.2"}))
    dns_server.zone("zen.spamhaus.org", dnsbl_lines(everything="127.255.255.254"))
    mmdb = write(tmp_path / "geo.mmdb", {"198.51.100.0/24": {
        "country": {"iso_code": "NL", "names": {"en": "Netherlands"}},
        "autonomous_system_number": 64500, "autonomous_system_organization": "Example Net"}})
    return dns_config.replace(dnsbl_zones=ZONES, geoip_db=mmdb)


@pytest.fixture
def acme(database):
    org = make_org("Acme")
    make_report(org, records=[{"source_ip": SES, "count": 4, **UNSIGNED_SES},
                              {"source_ip": OWN, "count": 9, "dkim": "fail"},
                              {"source_ip": LISTED, "count": 2, **FAILED, "auth_dkim": None,
                               "auth_spf": None},
                              {"source_ip": FORWARDER, "count": 3, **RESIGNED},
                              {"source_ip": SPOOF, "count": 1, **FAILED, "auth_dkim": None,
                               "auth_spf": None}])
    return org


@pytest.fixture
def rua_sources(database, world):
    def invoke(*args, offline=False):
        env = {"RUA_DATABASE_URL": world.database_url, "RUA_LOCK_DIR": world.lock_dir,
               "RUA_DNS_NAMESERVERS": "127.0.0.1", "RUA_DNS_PORT": str(world.dns_port),
               "RUA_DNS_TIMEOUT": str(world.dns_timeout), "RUA_DNSBL_ZONES": ZONES,
               "RUA_GEOIP_DB": world.geoip_db, "RUA_OFFLINE": "1" if offline else "0"}
        from cli import main
        result = CliRunner().invoke(main, ["sources", *args], env=env)
        db.initialize(database)     # the command pointed the shared proxy at its own connection
        return result
    return invoke


def source(ip) -> Source:
    return Source.get(Source.ip == ip)


def verdicts(ip) -> list[str]:
    return [r.classification for r in Record.select().where(Record.source_ip == ip)]


def test_refresh_stores_identity_geo_reputation_and_verdicts(acme, rua_sources):
    assert verdicts(SES) == ["suspicious"]          # classified before anyone knew the sender
    result = rua_sources("refresh")
    assert ok(result) == ["5 source(s) enriched, 2 record(s) reclassified"]
    assert "zen.spamhaus.org" in result.stderr and "127.255.255.254" in result.stderr
    ses = source(SES)
    assert (ses.ptr, ses.fcrdns, ses.service_slug, ses.service_kind) == (
        "a8-1.smtp-out.amazonses.com", "pass", "amazon-ses", "transactional")
    assert (ses.country, ses.country_name, ses.asn, ses.as_org) == (
        "NL", "Netherlands", 64500, "Example Net")
    assert ses.abuse_status == "clean" and ses.blocklist["status"] == "clean"
    assert ses.enriched_at is not None and ses.classification == "unknown"
    assert ses.search_text == "198.51.100.20 a8-1.smtp-out.amazonses.com amazon ses example.com"
    assert verdicts(SES) == ["needs_review"]        # a known service not yet aligned
    spoof = source(SPOOF)
    assert (spoof.ptr, spoof.fcrdns, spoof.service_slug) == (None, "fail", None)
    assert spoof.classification == "unauthorized" and verdicts(SPOOF) == ["suspicious"]
    own = source(OWN)
    assert (own.fcrdns, own.classification, own.authorized) == ("none", "authorized", True)
    listed = source(LISTED)
    assert listed.abuse_status == "malicious"
    assert listed.blocklist["listed_on"] == ["bl.spamcop.net", "psbl.surriel.com"]
    assert listed.classification == "unauthorized" and not listed.authorized


def test_a_known_forwarders_records_become_likely_forwarded_and_the_rollups_follow(
        acme, rua_sources):
    assert verdicts(FORWARDER) == ["suspicious"]
    ok(rua_sources("refresh", "--ip", FORWARDER))
    assert verdicts(FORWARDER) == ["likely_forwarded"]
    assert source(FORWARDER).classification == "forwarder"
    assert source(FORWARDER).forwarded == 3
    assert SourceDomain.get(SourceDomain.ip == FORWARDER).forwarded == 3
    assert DailyRollup.get(DailyRollup.source_ip == FORWARDER).forwarded == 3
    assert source(SES).enriched_at is None          # only the address asked for


def open_events() -> dict[str, tuple[str, str, str]]:
    return {e.dedupe_key: (e.type, e.domain, e.detail)
            for e in Event.select().where(Event.cleared_at.is_null())}


def test_events_are_raised_once_and_cleared_when_the_condition_goes(acme, rua_sources, world,
                                                                    dns_server):
    ok(rua_sources("refresh"))
    ok(rua_sources("refresh", "--ip", LISTED))
    both = ("unauthorized_sender", "example.com",
            f"2 sources sending as example.com are not authorized: {LISTED} (2 messages), "
            f"{SPOOF} (1 message).")
    assert open_events() == {
        f"blocklisted_source:{LISTED}": ("blocklisted_source", "example.com",
                                         f"{LISTED}, which sends mail as example.com, is listed "
                                         "on bl.spamcop.net, psbl.surriel.com."),
        "unauthorized_sender:example.com": both}
    assert Event.select().where(Event.type == "unauthorized_sender").count() == 1
    dns_server.zone("bl.spamcop.net", dnsbl_lines({}, ipv6=False))
    dns_server.zone("psbl.surriel.com", dnsbl_lines({}))
    ok(rua_sources("refresh", "--ip", LISTED))
    assert source(LISTED).abuse_status == "clean"
    # Off the lists, but still an identified host that is no service, failing DMARC throughout.
    assert open_events() == {"unauthorized_sender:example.com": both}
    assert verdicts(LISTED) == ["suspicious"]
    dns_server.zone("google.com", f"mail IN A {SPOOF}\n")     # now Google's, confirmed
    ok(rua_sources("refresh", "--ip", SPOOF))
    assert open_events()["unauthorized_sender:example.com"][2] == (
        f"1 source sending as example.com is not authorized: {LISTED} (2 messages).")
    dns_server.zone(V4, ptr_lines(V4, {LISTED: "a8-9.smtp-out.amazonses.com"}))
    dns_server.zone("amazonses.com", f"a8-9.smtp-out IN A {LISTED}\n")
    ok(rua_sources("refresh", "--ip", LISTED))
    assert open_events() == {}
    assert Event.select().where(Event.type == "unauthorized_sender").count() == 1


def test_one_event_per_ip_of_earlier_versions_gives_way_to_the_domains(acme, rua_sources):
    events.raise_event(acme.id, "unauthorized_sender", f"unauthorized_sender:{SPOOF}",
                       title="old")
    events.raise_event(acme.id, "unauthorized_sender", "unauthorized_sender:2001:db8::30",
                       title="old")
    ok(rua_sources("refresh", "--ip", SPOOF))
    assert [key for key in open_events() if key.startswith("unauthorized_sender:")] == [
        "unauthorized_sender:example.com"]


def test_an_events_detail_names_the_busiest_sources_and_counts_the_rest():
    senders = [(f"192.0.2.{n}", 10 - n) for n in range(1, 6)]
    assert jobs.unauthorized_detail("example.org", senders) == (
        "5 sources sending as example.org are not authorized: 192.0.2.1 (9 messages), "
        "192.0.2.2 (8 messages), 192.0.2.3 (7 messages) and 2 more.")


def test_offline_nothing_is_looked_up_or_stored(acme, rua_sources, dns_server):
    result = rua_sources("refresh", offline=True)
    assert result.exit_code == 0 and "RUA_OFFLINE" in result.stderr
    assert not Source.select().where(Source.enriched_at.is_null(False)).exists()
    assert not dns_server.asked(f"{V4}")
    assert jobs.scheduled(utcnow(), jobs_config(offline=True)) is None


def jobs_config(offline):
    from config import Config
    return Config(offline=offline)


def test_a_bad_ip_and_an_unknown_org_are_refused(acme, rua_sources):
    assert_refused(rua_sources("refresh", "--ip", "not-an-ip"), "not an IP address")
    assert_refused(rua_sources("refresh", "--org", "Nobody"), "Nobody")
    assert_refused(rua_sources("refresh", "--ip", "203.0.113.99"), "no source has that address")


def test_new_sources_are_due_first_and_enriched_ones_again_after_a_day(acme, world):
    now = datetime(2026, 11, 25, 5, 0)
    assert len(jobs.due(now)) == 5
    done = jobs.refresh(world, now, limit=2)
    assert done.sources == 2
    assert {ip for _, ip in jobs.due(now)} == {FORWARDER, SPOOF, SES, OWN, LISTED} - {
        s.ip for s in Source.select().where(Source.enriched_at.is_null(False))}
    jobs.refresh(world, now)
    assert jobs.due(now) == [] and jobs.due(now + timedelta(hours=23)) == []
    later = now + timedelta(days=1, minutes=1)
    assert len(jobs.due(later)) == 5
    assert jobs.scheduled(later, world).sources == 5
    assert source(SES).enriched_at == later


def test_an_ipv6_source_in_any_spelling_is_enriched_and_reclassified(database, world,
                                                                      dns_server):
    v6 = reverse_origin("2001:db8::/32")
    dns_server.zone(v6, ptr_lines(v6, {"2001:db8::20": "a8-1.smtp-out.amazonses.com"}))
    dns_server.zone("amazonses.com", "a8-1.smtp-out IN AAAA 2001:db8::20\n")
    org = make_org()
    make_report(org, records=[{"source_ip": "2001:DB8:0:0::20", "count": 2, **UNSIGNED_SES}])
    assert jobs.refresh(world, ips=["2001:0db8::0020"]).reclassified == 1
    assert source("2001:db8::20").service_slug == "amazon-ses"
    assert verdicts("2001:DB8:0:0::20") == ["needs_review"]


def test_first_seen_is_the_report_window(acme):
    row = source(SES)
    report = Record.get(Record.source_ip == SES).report
    assert (row.first_seen, row.last_seen) == (from_epoch(report.date_begin),
                                               from_epoch(report.date_end))


@pytest.mark.slow
def test_the_corpus_enriched_keeps_every_total_and_forwarded_count_equal_to_its_records(
        database, world, dns_server, corpus_dir):
    from cli import main
    from tests.ingest.test_source_facts import assert_facts_match_records
    org = make_org("corpus-enriched")
    CliRunner().invoke(main, ["ingest", "--org", "corpus-enriched", str(corpus_dir / "aggregate")],
                       env={"RUA_DATABASE_URL": world.database_url})
    db.initialize(database)
    done = jobs.refresh(world)
    # Every source was looked up; one the test's DNS can tell nothing of is left to a later run.
    assert done.sources + done.unlearned == Source.select().where(Source.org == org).count() > 100
    assert_facts_match_records(org)
    forwarded = {}
    for ip, count in (Record.select(Record.source_ip, Record.count)
                      .where(Record.org == org, Record.classification == "likely_forwarded")
                      .tuples()):
        forwarded[canonical_ip(ip)] = forwarded.get(canonical_ip(ip), 0) + count
    assert {s.ip: s.forwarded for s in Source.select() if s.forwarded} == forwarded
    rollups = {}
    for row in DailyRollup.select().where(DailyRollup.org == org, DailyRollup.forwarded > 0):
        rollups[row.source_ip] = rollups.get(row.source_ip, 0) + row.forwarded
    assert rollups == forwarded
    unauthorized = {d for (d,) in SourceDomain.select(SourceDomain.domain).join(
        Source, on=(Source.org == SourceDomain.org) & (Source.ip == SourceDomain.ip))
        .where(Source.org == org, Source.classification == "unauthorized").tuples()}
    assert {e.domain for e in Event.select().where(
        Event.type == "unauthorized_sender", Event.cleared_at.is_null())} == unauthorized
    for report in Report.select().where(Report.org == org):
        body = detail_at_once(org.id, report.id)
        assert [e["rule"] for e in body["record_evidence"]] == body["record_classifications"]


def test_after_enrichment_health_and_overview_agree_with_the_sources(acme, world):
    from snapshotter.refreshes import refresh_dirty
    from store import snapshots
    from store.encoding import loads
    now = utcnow()
    refresh_dirty(now, world)
    overview = loads(snapshots.get(acme.id, "overview").body)
    assert overview["org_health"]["forwarded_messages"] == 0     # nothing known yet
    jobs.refresh(world, now)
    refresh_dirty(now, world)
    health = loads(snapshots.get(acme.id, "health", "example.com").body)
    senders = {s["ip"]: s for s in health["top_senders"]}
    assert (senders[SES]["service_slug"], senders[SES]["service_name"]) == (
        "amazon-ses", source(SES).service_name)
    assert "service_slug" not in senders[OWN]
    overview = loads(snapshots.get(acme.id, "overview").body)
    assert overview["org_health"]["forwarded_messages"] == 3     # the forwarder's records


GOOGLE_SPF = {"status": "ok", "record": "v=spf1 include:_spf.google.com ~all",
              "includes": ["_spf.google.com", "_netblocks.google.com", "_netblocks2.google.com"]}
RELAYED = "198.51.100.70"          # no PTR: only the domain's SPF can say who runs it


@pytest.mark.parametrize("spf, slug", [
    (GOOGLE_SPF, "google"),
    ({**GOOGLE_SPF, "record": "v=spf1 ip4:198.51.100.0/24 include:_spf.google.com ~all"}, None),
    ({**GOOGLE_SPF, "includes": ["_spf.google.com", "sendgrid.net"]}, None),
    ({**GOOGLE_SPF, "includes": ["_spf.google.com", "spf.relay.example"]}, None)])
def test_a_service_named_only_by_the_domains_spf_includes_is_identified(database, world,
                                                                        spf, slug):
    org = make_org("Relayed")
    make_domain(org, "example.com", dns={"spf": spf})
    passed = [{"Domain": "example.com", "Scope": "mfrom", "Result": "pass", "HumanResult": ""}]
    make_report(org, records=[{"source_ip": RELAYED, "count": 5, "dkim": "fail", "spf": "pass",
                               "auth_dkim": None, "auth_spf": passed}])
    jobs.refresh(world)
    row = source(RELAYED)
    assert (row.fcrdns, row.service_slug) == ("none", slug)
    assert row.classification == "authorized"


def test_includes_count_only_for_an_aligned_mail_from_pass(database, world):
    org = make_org("Unaligned")
    make_domain(org, "example.com", dns={"spf": GOOGLE_SPF})
    make_domain(org, "other.example", dns={"spf": GOOGLE_SPF})
    helo = [{"Domain": "example.com", "Scope": "helo", "Result": "pass", "HumanResult": ""}]
    other = [{"Domain": "other.example", "Scope": "mfrom", "Result": "pass", "HumanResult": ""}]
    make_report(org, records=[{"source_ip": RELAYED, "count": 1, **FAILED, "auth_dkim": None,
                               "auth_spf": helo},
                              {"source_ip": SES, "count": 1, **FAILED, "auth_dkim": None,
                               "auth_spf": other}])
    assert jobs.signals(org.id, [RELAYED, SES]) == {
        RELAYED: Signals(), SES: Signals(spf_domains=("other.example",))}


def test_a_dead_resolver_enriches_nothing_says_so_and_backs_off(acme, rua_sources, world,
                                                                 dns_server):
    ok(rua_sources("refresh", "--ip", SES))
    known = source(SES)
    dns_server.fault(".", "silent")                 # the resolver answers nothing at all
    result = rua_sources("refresh")
    assert result.exit_code == 1 and "0 source(s) enriched" in result.stdout
    assert ("rua: error: 4 source(s) not enriched: resolver 127.0.0.1 did not answer"
            in result.stderr)
    assert "enriching sources" not in result.stderr          # not a terminal: no progress line
    # Nothing learned, nothing lost: what was known stays, the rest stays due.
    assert (source(SES).ptr, source(SES).enriched_at) == (known.ptr, known.enriched_at)
    assert not Source.select().where(Source.ip != SES, Source.enriched_at.is_null(False)).exists()
    # Tried again after a back-off, not at once and not a day later.
    now = utcnow()
    asked = len(dns_server.asked())
    assert jobs.refresh(world, now).waiting and len(dns_server.asked()) == asked
    dns_server.reset()                  # answering again (every name now unknown to it)
    later = jobs.refresh(world, now + timedelta(minutes=16))
    assert later.sources == 4 and not later.waiting


def test_a_resolver_that_denies_every_name_stops_enrichment_after_one_question(
        acme, rua_sources, dns_server):
    dns_server.fault(".", "nxdomain")               # a broken or captive resolver
    result = rua_sources("refresh")
    assert result.exit_code == 1 and "0 source(s) enriched" in result.stdout
    assert ("rua: error: 5 source(s) not enriched: resolver 127.0.0.1 says no name exists, "
            "not even the root") in result.stderr
    assert [question[:2] for question in dns_server.asked()] == [(".", "NS")]
    assert not Source.select().where(Source.enriched_at.is_null(False)).exists()


def test_the_back_off_doubles_up_to_a_day():
    from sources import retry
    assert [retry.delay(n) for n in (1, 2, 3)] == [timedelta(minutes=15), timedelta(minutes=30),
                                                   timedelta(hours=1)]
    assert retry.delay(30) == timedelta(days=1)


def test_progress_is_one_line_rewritten_on_a_terminal(capsys):
    from cli.sources import Progress
    shown = Progress()
    for done in range(1, 4):
        shown.update(done, 3)
    shown.close()
    err = capsys.readouterr().err
    assert err.startswith("\renriching sources: 1 of 3") and err.endswith("3 of 3\n")
