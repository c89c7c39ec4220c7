"""The demo generator writes real, varied, deterministic aggregate reports."""
from __future__ import annotations

import datetime as dt
import gzip
import io
import ipaddress
import tracemalloc
import zipfile
from collections import Counter

import pytest
from lxml import etree

from demo import reports as generator
from demo.report_xml import NAMESPACE_9990
from ingest.model import Document
from ingest.xml_report import parse

END = dt.date(2026, 3, 31)
SAFE = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def tree(report):
    return etree.fromstring(report.xml.encode(), SAFE)


def find(node, path):
    """Namespace-blind child lookup: both dialects use the same local names."""
    return node.xpath("/".join(f"*[local-name()='{part}']" for part in path.split("/")))


def text(node, path):
    hits = find(node, path)
    return hits[0].text if hits else None


@pytest.fixture(scope="module")
def reports():
    return list(generator.generate(seed=7, days=28, end=END))


@pytest.fixture(scope="module")
def records(reports):
    """(report, record element) for every record of every report."""
    return [(r, rec) for r in reports for rec in find(tree(r), "record")]


def test_same_seed_gives_the_same_reports_and_another_seed_others():
    first = [r.xml for r in generator.generate(seed=3, days=5, end=END)]
    again = [r.xml for r in generator.generate(seed=3, days=5, end=END)]
    other = [r.xml for r in generator.generate(seed=4, days=5, end=END)]
    assert first == again
    assert first != other


def test_every_report_is_well_formed_xml_for_one_utc_day(reports):
    for report in reports:
        root = tree(report)
        begin, end = int(text(root, "report_metadata/date_range/begin")), \
            int(text(root, "report_metadata/date_range/end"))
        assert begin % 86400 == 0
        assert end - begin in (86399, 86400)
        assert dt.datetime.fromtimestamp(begin, dt.timezone.utc).date() == report.day
        assert report.records == len(find(root, "record")) > 0


def test_days_and_domains_are_covered_by_all_six_reporters(reports):
    assert {r.day for r in reports} == {END - dt.timedelta(days=n) for n in range(28)}
    assert {r.domain for r in reports} == set(generator.DOMAINS)
    assert {r.reporter.org_name for r in reports} == {
        "google.com", "Outlook.com", "Enterprise Outlook", "Yahoo", "Mail.Ru", "comcast.net",
        "Fjordnett"}


def test_report_ids_are_unique_per_reporter_and_domain(reports):
    keys = Counter((r.reporter.org_name, text(tree(r), "report_metadata/report_id"), r.domain)
                   for r in reports)
    assert max(keys.values()) == 1


@pytest.mark.parametrize("org_name", ["Yahoo", "Fjordnett"])
def test_rfc9990_reporters_use_the_namespace_and_the_dmarcbis_fields(reports, org_name):
    report = next(r for r in reports if r.reporter.org_name == org_name)
    root = tree(report)
    assert root.tag == f"{{{NAMESPACE_9990}}}feedback"
    policy = find(root, "policy_published")[0]
    assert text(policy, "np") in ("none", "quarantine", "reject")
    assert text(policy, "testing") in ("y", "n")
    assert text(policy, "discovery_method") == "psl"
    assert text(root, "report_metadata/generator")
    assert not find(policy, "pct")


@pytest.mark.parametrize("org_name", ["google.com", "Outlook.com", "Enterprise Outlook",
                                      "Mail.Ru", "comcast.net"])
def test_rfc7489_reporters_write_no_namespace_and_a_pct(reports, org_name):
    report = next(r for r in reports if r.reporter.org_name == org_name)
    root = tree(report)
    assert root.tag == "feedback"
    assert text(root, "policy_published/pct") in ("25", "100")
    assert not find(root, "policy_published/testing")


def _auth(rec):
    dkim = [(text(d, "domain"), text(d, "selector"), text(d, "result"))
            for d in find(rec, "auth_results/dkim")]
    spf = [(text(x, "domain"), text(x, "result")) for x in find(rec, "auth_results/spf")]
    return dkim, spf


@pytest.mark.parametrize("selector, first_octets", [
    ("google", "209.85."),       # Google Workspace
    ("selector1", "40.107."),    # Microsoft 365
    ("s1", "167.89."),           # SendGrid
    ("k1", "198.2."),            # Mailchimp
])
def test_aligned_services_pass_dmarc_with_their_own_selectors(records, selector, first_octets):
    hits = [rec for _, rec in records
            if text(rec, "row/source_ip").startswith(first_octets)
            and any(s == selector and res == "pass" for _, s, res in _auth(rec)[0])]
    assert hits
    assert all(text(rec, "row/policy_evaluated/dkim") == "pass" for rec in hits)


@pytest.mark.parametrize("reason", ["mailing_list", "local_policy"])
def test_mailing_lists_break_dkim_and_receivers_name_the_override(records, reason):
    hits = [rec for _, rec in records
            if text(rec, "row/policy_evaluated/reason/type") == reason]
    assert hits
    for rec in hits:
        header_from = text(rec, "identifiers/header_from")
        assert (header_from, "fail") in [(d, res) for d, _, res in _auth(rec)[0]]
        assert text(rec, "row/policy_evaluated/disposition") == "none"


def test_unaligned_legitimate_senders_pass_for_their_own_domain_only(records):
    hits = [rec for _, rec in records if ("zendesk.com", "zendesk1", "pass") in _auth(rec)[0]]
    assert hits
    assert all(text(rec, "row/policy_evaluated/dkim") == "fail" and
               text(rec, "row/policy_evaluated/spf") == "fail" for rec in hits)


def test_spoofing_comes_from_unknown_addresses_and_meets_the_policy(records):
    spoofs = [(r, rec) for r, rec in records
              if ipaddress.ip_address(text(rec, "row/source_ip")) in ipaddress.ip_network("203.0.113.0/24")]
    assert spoofs
    assert all(text(rec, "row/policy_evaluated/dkim") == "fail" for _, rec in spoofs)
    rejected = [rec for r, rec in spoofs if r.domain == "example.com"
                and text(rec, "row/policy_evaluated/disposition") == "reject"]
    assert rejected


def test_ipv6_sources_appear(records):
    assert any(":" in text(rec, "row/source_ip") for _, rec in records)


def test_weekdays_carry_more_mail_than_weekends():
    reports = list(generator.generate(seed=1, days=28, end=END))
    by_day = Counter()
    for r in reports:
        if r.domain == "example.com":
            by_day[r.day.weekday()] += r.messages
    assert min(by_day[d] for d in range(5)) > 2 * max(by_day[5], by_day[6])


def test_a_policy_change_shows_in_the_later_reports(reports):
    pcts = [text(tree(r), "policy_published/pct") for r in reports
            if r.domain == "example.net" and r.reporter.key == "google"]
    assert pcts[0] == "25" and pcts[-1] == "100"


def test_payloads_are_what_each_reporter_attaches(reports, tmp_path):
    kinds = {}
    for report in reports:
        kinds.setdefault(report.reporter.compression, report)
    assert set(kinds) == {"zip", "gzip", ""}
    paths = generator.write_files(kinds.values(), tmp_path)
    for report, path in zip(kinds.values(), paths):
        data = path.read_bytes()
        if path.name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                data = archive.read(archive.namelist()[0])
        elif path.name.endswith(".gz"):
            data = gzip.decompress(data)
        assert data.decode() == report.xml
        assert path.name.split("!")[1] == report.domain


@pytest.mark.parametrize("dialect", ["rfc7489", "rfc9990"])
def test_a_large_report_streams_with_flat_memory(tmp_path, dialect):
    path = tmp_path / "large.xml"
    tracemalloc.start()
    messages = generator.write_large_report(path, 8_000, seed=2, dialect=dialect)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert path.stat().st_size > 5_000_000
    assert peak < 1_000_000
    counted = total = 0
    for _, element in etree.iterparse(str(path), tag="{*}record", resolve_entities=False,
                                      no_network=True):
        counted += 1
        total += int(text(element, "row/count"))
        element.clear()
    assert counted == 8_000 and total == messages


def test_a_large_report_ending_in_gz_is_gzipped(tmp_path):
    path = tmp_path / "large.xml.gz"
    generator.write_large_report(path, 500)
    root = etree.fromstring(gzip.decompress(path.read_bytes()), SAFE)
    assert len(find(root, "record")) == 500


@pytest.mark.parametrize("org_name", ["google.com", "Outlook.com", "Enterprise Outlook", "Mail.Ru",
                                      "comcast.net", "Yahoo", "Fjordnett"])
def test_both_dialects_parse_cleanly_with_the_report_parser(reports, org_name):
    report = next(r for r in reports if r.reporter.org_name == org_name)
    policy = generator.DOMAINS[report.domain].policy
    data = report.xml.encode()
    parsed = parse(Document(report.filename, lambda: io.BytesIO(data)))
    rows = list(parsed.records)
    assert parsed.warnings == []
    assert (parsed.meta.org_name, parsed.meta.domain, parsed.meta.p) == (org_name, report.domain, policy.p)
    if report.reporter.style.dialect == "rfc9990":
        assert (parsed.meta.pct, parsed.meta.testing) == (None, policy.testing)
        assert parsed.meta.generator and parsed.meta.discovery_method == "psl"
    else:
        assert (parsed.meta.pct, parsed.meta.testing, parsed.meta.generator) == (policy.pct, "", "")
    assert len(rows) == report.records and sum(r.count for r in rows) == report.messages
