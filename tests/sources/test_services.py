"""The shipped service map and which signal names a source's service."""
from __future__ import annotations

import json

import pytest

from sources import services
from sources.services import DKIM, KINDS, PTR, SPF, SPF_INCLUDE, ServiceMapError, identify


def test_the_shipped_map_loads_and_every_entry_rests_on_a_fact():
    shipped = services.shipped()
    entries = {s.slug: s for s in shipped.values()}
    assert len(entries) >= 40
    assert {s.kind for s in entries.values()} == set(KINDS)
    assert all(s.fact and s.name and s.icon for s in entries.values())


@pytest.mark.parametrize("name, slug", [
    # the large mailbox providers
    ("mail-sor-f41.google.com", "google"),
    ("mail-db8eur05on2100.outbound.protection.outlook.com", "microsoft"),
    ("sonic301-22.consmr.mail.ne1.yahoo.com", "yahoo"),
    ("st43p00im-zteg10073401.me.com", "apple-icloud"),
    # the senders most common in the corpus (DKIM d= and SPF domains of its records)
    ("alias.example.com.20230601.gappssmtp.com", "google"),
    ("a8-1.smtp-out.amazonses.com", "amazon-ses"),
    ("sendgrid.info", "sendgrid"),
    ("mailgun.org", "mailgun"),
    ("zohodesk.com", "zoho"),
    ("bounce.zcsend.net", "zoho-campaigns"),
    ("p3plsmtpa07-01.prod.phx3.secureserver.net", "godaddy"),
    ("smtp78.relay.iad3a.emailsrvr.com", "rackspace"),
    ("topicbox.com", "topicbox"),
    ("mail.ietf.org", "ietf-lists"),
    ("us-smtp-delivery-1.mimecast.com", "mimecast"),
])
def test_names_find_their_service_by_the_longest_matching_domain(name, slug):
    assert services.lookup(name)[0].slug == slug


def test_a_name_outside_the_map_or_a_bare_suffix_finds_nothing():
    assert services.lookup("ec2-3-4-5-6.compute-1.amazonaws.com") is None
    assert services.lookup("com") is None and services.lookup(None) is None
    assert services.lookup("notgoogle.com") is None


def test_the_confirmed_ptr_speaks_first():
    found = identify("mail-sor-f41.google.com", dkim_domains=["sendgrid.info"])
    assert (found.service.slug, found.via, found.domain) == ("google", PTR, "google.com")


def test_auth_results_name_the_service_when_the_ptr_names_none():
    found = identify("o1.email.customer.example",
                     dkim_domains=["customer.example", "sendgrid.info"],
                     spf_domains=["bounces.amazonses.com"])
    assert (found.service.slug, found.via) == ("sendgrid", DKIM)
    assert identify(None, spf_domains=["bounces.amazonses.com"]).via == SPF
    found = identify(None, spf_includes=["_spf.google.com"])
    assert (found.service.slug, found.via, found.domain) == ("google", SPF_INCLUDE, "google.com")


def test_the_most_named_service_wins_and_a_tie_names_none():
    found = identify(None, dkim_domains=["sendgrid.info", "mailgun.org", "sendgrid.info"])
    assert found.service.slug == "sendgrid"
    assert identify(None, dkim_domains=["sendgrid.info", "mailgun.org"]) is None
    tied_then_spf = identify(None, dkim_domains=["sendgrid.info", "mailgun.org"],
                             spf_domains=["mailgun.org"])
    assert (tied_then_spf.service.slug, tied_then_spf.via) == ("mailgun", SPF)
    assert identify(None) is None


def _map(*entries) -> str:
    return json.dumps({"services": [dict(slug="s", name="S", icon="s", kind="esp", fact="f",
                                         domains=["s.example"]) | e for e in entries]})


@pytest.mark.parametrize("text, message", [
    (_map({}, {"domains": ["other.example"]}), "slug 's' appears twice"),
    (_map({}, {"slug": "t"}), "domain 's.example' is in s and t"),
    (_map({"kind": "isp"}), "kind 'isp'"),
    (_map({"fact": " "}), "no public fact"),
])
def test_a_broken_map_is_refused_saying_why(text, message):
    with pytest.raises(ServiceMapError, match=message):
        services.load(text)
