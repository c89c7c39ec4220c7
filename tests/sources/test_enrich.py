"""A whole enrichment run against the test DNS server: identity, service, geo and reputation."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from sources.dnsbl import query_name
from sources.enrich import Signals, enrich
from sources.geo import GeoError
from tests.sources.test_geo import write
from tests.sources.zones import dnsbl_lines, ptr_lines, reverse_origin

NOW = datetime(2026, 11, 25, 5, 0, tzinfo=timezone.utc)
V4, V6 = reverse_origin("198.51.100.0/24"), reverse_origin("2001:db8::/32")
GOOGLE, SES, SPOOF, BARE, LISTED = ("198.51.100.10", "198.51.100.20", "198.51.100.30",
                                    "198.51.100.40", "198.51.100.66")
GOOGLE6 = "2001:db8::10"
ZONES = "bl.spamcop.net,psbl.surriel.com,zen.spamhaus.org,dnsbl.dronebl.org"


@pytest.fixture
def world(dns_server, dns_config, tmp_path):
    dns_server.zone(V4, ptr_lines(V4, {GOOGLE: "mail-sor-f41.google.com",
                                       SES: "a8-1.smtp-out.amazonses.com",
                                       SPOOF: "mail.google.com",
                                       LISTED: "host66.dynamic.isp.example"}))
    dns_server.zone(V6, ptr_lines(V6, {GOOGLE6: "mail-sor-f41.google.com"}))
    dns_server.zone("google.com", f"mail-sor-f41 IN A {GOOGLE}\nmail-sor-f41 IN AAAA {GOOGLE6}\n"
                                  "mail IN A 192.0.2.1\n")
    dns_server.zone("amazonses.com", f"a8-1.smtp-out IN A {SES}\n")
    dns_server.zone("isp.example", f"host66.dynamic IN A {LISTED}\n")
    dns_server.zone("bl.spamcop.net", dnsbl_lines({LISTED: "127.0.0.2"}, ipv6=False))
    dns_server.zone("psbl.surriel.com", dnsbl_lines({LISTED: "127.0.0.2"}))
    dns_server.zone("zen.spamhaus.org", dnsbl_lines(everything="127.255.255.254"))
    dns_server.zone("dnsbl.dronebl.org", dnsbl_lines(everything="127.0.0.2"))
    mmdb = write(tmp_path / "geo.mmdb", {"198.51.100.0/24": {
        "country": {"iso_code": "US", "names": {"en": "United States"}},
        "autonomous_system_number": 64496, "autonomous_system_organization": "Example AS"}})
    return dns_config.replace(dnsbl_zones=ZONES, geoip_db=mmdb)


def test_a_run_enriches_every_ip_with_what_dns_and_the_databases_say(world, dns_server):
    run = enrich(world, [GOOGLE, SES, SPOOF, BARE, LISTED, GOOGLE6, "2001:DB8::10"],
                 signals={BARE: Signals(dkim_domains=("sendgrid.info",))}, now=NOW)
    rows = {ip: found.fields() for ip, found in run.results.items()}
    assert rows[GOOGLE]["ptr"] == "mail-sor-f41.google.com"
    assert (rows[GOOGLE]["service_slug"], rows[GOOGLE]["service_kind"]) == ("google",
                                                                           "mailbox_provider")
    assert rows[GOOGLE]["geo"] == {"country": "US", "country_name": "United States",
                                   "asn": 64496, "as_org": "Example AS"}
    assert rows[GOOGLE]["abuse_status"] == "clean"
    assert rows[GOOGLE]["blocklist"] == {"status": "clean", "listed_on": [],
                                         "checked_at": "2026-11-25T05:00:00Z"}
    assert rows[SES]["service_slug"] == "amazon-ses"
    assert rows[SPOOF]["ptr"] is None and rows[SPOOF]["service_slug"] is None   # FCrDNS failed
    assert run.results[SPOOF].identity.fcrdns == "fail"
    assert rows[BARE]["service_slug"] == "sendgrid" and run.results[BARE].service.via == "dkim"
    assert rows[LISTED]["abuse_status"] == "malicious"       # two lists
    assert rows[LISTED]["blocklist"]["listed_on"] == ["bl.spamcop.net", "psbl.surriel.com"]
    assert rows[GOOGLE6]["ptr"] == "mail-sor-f41.google.com"
    assert rows["2001:DB8::10"] == rows[GOOGLE6]              # any spelling, same answers
    assert rows[GOOGLE6]["abuse_status"] == "clean"          # psbl serves IPv6; spamcop does not
    assert [o.zone for o in run.results[GOOGLE6].outcomes] == ["psbl.surriel.com"]
    assert {z.zone for z in run.dropped} == {"zen.spamhaus.org", "dnsbl.dronebl.org"}
    assert any("zen.spamhaus.org" in p and "127.255.255.254" in p for p in run.problems)


def test_each_zone_is_self_tested_once_a_run_and_each_name_asked_once(world, dns_server):
    enrich(world, [GOOGLE, SES, GOOGLE, LISTED], now=NOW)
    assert len(dns_server.asked("2.0.0.127.bl.spamcop.net", "A")) == 1
    assert len(dns_server.asked(query_name(GOOGLE, "bl.spamcop.net"), "A")) == 1
    assert not dns_server.asked(query_name(GOOGLE, "zen.spamhaus.org"))


def test_offline_everything_dns_derived_is_unknown_but_local_databases_still_answer(
        world, dns_server):
    run = enrich(world.replace(offline=True), [GOOGLE, LISTED], now=NOW)
    row = run.results[LISTED].fields()
    assert (row["ptr"], row["service_slug"], row["abuse_status"]) == (None, None, "unknown")
    assert row["blocklist"] == {"status": "unknown", "listed_on": [], "checked_at": None}
    assert row["country"] == "US"
    assert dns_server.asked() == []
    assert len(run.dropped) == 4


def test_a_bad_address_is_reported_and_the_rest_enriched(world):
    run = enrich(world, ["not-an-ip", GOOGLE], now=NOW)
    assert "is not an IP address" in run.results["not-an-ip"].error
    assert run.results["not-an-ip"].fields()["abuse_status"] == "unknown"
    assert run.results[GOOGLE].identity.ptr == "mail-sor-f41.google.com"


def test_a_bad_geo_database_stops_the_run_before_any_lookup(world, dns_server, tmp_path):
    with pytest.raises(GeoError, match="RUA_GEOIP_DB"):
        enrich(world.replace(geoip_db=str(tmp_path / "missing.mmdb")), [GOOGLE])
    assert dns_server.asked() == []


def test_no_zones_configured_means_reputation_unknown(world):
    run = enrich(world.replace(dnsbl_zones=""), [GOOGLE], now=NOW)
    assert run.zones == [] and run.results[GOOGLE].reputation.abuse_status == "unknown"
