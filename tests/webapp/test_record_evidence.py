"""record_evidence[] on GET /reports/{id}: the rule that decided each record and its facts,
agreeing with record_classifications[] before and after enrichment learns who sends."""
from __future__ import annotations

import pytest

from sources import jobs
from tests.cli.test_sources import (FORWARDER, LISTED, SES, SPOOF, acme, world)  # noqa: F401
from tests.dnscheck.conftest import _dns_server_session, dns_config, dns_server  # noqa: F401
from tests.factories import make_key
from tests.webapp.helpers import get

RULES = {"authenticated", "likely_forwarded", "suspicious", "needs_review"}


@pytest.fixture
def detail(app, client, acme):  # noqa: F811
    key = make_key(acme)[1]
    report_id = get(client, "/reports", key).get_json()["reports"][0]["id"]

    def fetch() -> tuple[dict, dict]:
        body = get(client, f"/reports/{report_id}", key).get_json()
        ips = [r["Row"]["SourceIP"] for r in body["Records"]]
        return body, {ip: (c, e) for ip, c, e in zip(ips, body["record_classifications"],
                                                     body["record_evidence"])}
    return fetch


def assert_agrees(body: dict) -> None:
    assert len(body["record_evidence"]) == len(body["Records"])
    for verdict, evidence in zip(body["record_classifications"], body["record_evidence"]):
        assert evidence["rule"] == verdict
        assert evidence["because"] and evidence["sentence"].endswith(".")


def test_each_record_names_its_rule_and_facts(detail):
    body, by_ip = detail()
    assert_agrees(body)
    verdict, evidence = by_ip[SPOOF]
    assert verdict == "suspicious"
    assert evidence["because"] == ["no_aligned_dkim_signature", "no_aligned_spf_pass",
                                   "not_a_known_sending_service"]
    assert "not a known sending service" in evidence["sentence"]


def test_evidence_follows_the_sender_once_enrichment_knows_it(detail, world):  # noqa: F811
    _, before = detail()
    assert before[SES][0] == "suspicious" and before[FORWARDER][0] == "suspicious"
    jobs.refresh(world)
    body, after = detail()
    assert_agrees(body)
    assert after[SES] == ("needs_review", {
        "rule": "needs_review", "because": ["dmarc_failed", "known_sending_service"],
        "sentence": "DMARC failed from Amazon SES, a known sending service: it is probably "
                    "not yet set up to sign with the domain's DKIM key or to send from an "
                    "aligned domain."})
    assert after[FORWARDER][1]["because"] == ["other_domain_passed_from_known_forwarder"]
    assert after[LISTED][1]["because"] == ["reputation_malicious"]


def test_a_record_spelling_its_address_otherwise_finds_its_source(app, client):
    from rules.verdicts import sender
    from store.models import Source
    from tests.factories import make_org, make_report
    org = make_org("Spelled")
    key = make_key(org)[1]
    report = make_report(org, records=[{"source_ip": "2001:0DB8::0020", "count": 2, "dkim": "fail",
                                        "spf": "fail", "auth_dkim": None, "auth_spf": None}])
    Source.update(service_slug="amazon-ses", service_kind="transactional",
                  service_name="Amazon SES").where(Source.org == org).execute()
    jobs.reclassify(org.id, Source.get(Source.org == org), sender("transactional", "clean"))
    body = get(client, f"/reports/{report.id}", key).get_json()
    assert body["record_classifications"] == ["needs_review"]
    assert body["record_evidence"][0]["because"] == ["dmarc_failed", "known_sending_service"]
    assert "Amazon SES" in body["record_evidence"][0]["sentence"]
