"""Bringing an archive in: `rua ingest --dry-run` looks, `--org ORG --add-domains` takes it in."""
from __future__ import annotations

import pytest

from store.models import Domain, Event, Outbox, Report
from tests.factories import make_domain
from tests.ingest import xmlbuild

DOMAINS = [f"d{n:02}.example.net" for n in range(25)]    # past the 20 a day reports may add
DAY = 86_400
OLD = 1_370_000_000     # 2013-05-31: an archive's history, long before the scoring window


@pytest.fixture
def acme(acme):
    """conftest's Acme, monitoring example.com."""
    make_domain(acme, "example.com")
    return acme


@pytest.fixture
def archive(tmp_path):
    """A folder of one report per domain, a day apart, as parsedmarc or a mail folder keeps."""
    folder = tmp_path / "archive"
    folder.mkdir()
    for n, domain in enumerate(DOMAINS):
        begin = OLD + n * DAY
        data = xmlbuild.report_bytes([xmlbuild.record(count=3)], report_id=f"r-{n}",
                                     domain=domain, begin=begin, end=begin + DAY - 1)
        (folder / f"{domain}.xml").write_bytes(data)
    return folder


def _stored_nothing():
    assert Report.select().count() == 0
    assert [d.name for d in Domain.select()] == ["example.com"]
    assert Event.select().count() == 0 and Outbox.select().count() == 0


def test_dry_run_without_org_names_the_domains_no_organization_monitors(rua, acme, archive):
    result = rua("ingest", "--dry-run", archive)
    assert result.exit_code == 1, result.stderr
    out = result.stdout
    assert "dry run: nothing was stored" in out and "store no report" in out
    assert "refuse 25 reports for 25 domains no organization monitors" in out
    assert "d00.example.net (1), d01.example.net (1)" in out
    assert "reports cover 2013-05-31 to 2013-06-25" in out
    assert "refused    " not in out      # the plan sums up every refusal
    _stored_nothing()


def test_dry_run_with_org_lists_the_domains_past_the_caps_and_stores_nothing(rua, acme,
                                                                             archive):
    result = rua("ingest", "--dry-run", "--org", "Acme", archive)
    assert result.exit_code == 1, result.stderr
    out = result.stdout
    assert "store 20 reports for Acme" in out
    assert "add 20 domains to Acme's monitored domains: d00.example.net, " in out
    assert ("refuse 5 reports for 5 domains past Acme's caps on domains added by reports: "
            "d20.example.net (1), ") in out
    assert "--add-domains takes them in" in out
    _stored_nothing()      # the auto_domain_cap event was rolled back with the rest


def test_dry_run_with_add_domains_would_take_every_domain(rua, acme, archive):
    result = rua("ingest", "--dry-run", "--org", "Acme", "--add-domains", archive)
    assert result.exit_code == 0, result.stderr
    assert "store 25 reports for Acme" in result.stdout
    assert "add 25 domains to Acme's monitored domains" in result.stdout
    _stored_nothing()


def test_add_domains_stores_the_whole_archive_past_the_caps(rua, acme, archive):
    result = rua("ingest", "--org", "Acme", "--add-domains", archive)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("25 files: 25 reports stored, 0 duplicates, 0 refused; ")
    assert lines[-1].startswith("reports cover 2013-05-31 to 2013-06-25, all before the last "
                                "30 days")
    assert Report.select().count() == 25
    added = Domain.select().where(Domain.name != "example.com")
    assert sorted(d.name for d in added) == DOMAINS
    assert {d.source for d in added} == {"manual"}      # taken in by the user, not by reports
    assert Event.select().where(Event.type == "auto_domain_cap").count() == 0


def test_without_add_domains_the_caps_still_hold(rua, acme, archive):
    result = rua("ingest", "--org", "Acme", archive)
    assert result.exit_code == 1
    assert Report.select().count() == 20
    assert "RUA_MAX_AUTO_DOMAINS_PER_DAY=20" in result.stdout


def test_dry_run_sees_a_report_the_archive_holds_twice_as_a_duplicate(rua, acme, tmp_path):
    data = xmlbuild.report_bytes([xmlbuild.record(count=2)], report_id="twice")
    (tmp_path / "a.xml").write_bytes(data)
    (tmp_path / "b.xml").write_bytes(data)
    result = rua("ingest", "--dry-run", tmp_path / "a.xml", tmp_path / "b.xml")
    assert result.exit_code == 0, result.stderr
    assert "store 1 report for Acme" in result.stdout
    assert "pass over 1 report already stored" in result.stdout
    assert Report.select().count() == 0


def test_dry_run_shows_the_files_refused_for_other_reasons(rua, acme, tmp_path):
    (tmp_path / "bad.xml").write_bytes(b"<feedback><oops")
    result = rua("ingest", "--dry-run", tmp_path / "bad.xml")
    assert result.exit_code == 1
    assert result.stdout.startswith("refused    ")
    assert "refuse 1 other report (the lines above say why)" in result.stdout


@pytest.mark.parametrize("args, reason", [
    (("--add-domains",), "--add-domains takes the domains into one organization"),
    (("--dry-run", "--snapshot"), "--snapshot has nothing to refresh after --dry-run"),
])
def test_flags_that_do_not_go_together_are_usage_errors(rua, acme, archive, args, reason):
    result = rua("ingest", *args, archive)
    assert result.exit_code == 2
    assert reason in result.stderr
    assert Report.select().count() == 0


def test_the_days_covered_leave_out_a_reporters_broken_clock(rua, acme, tmp_path):
    paths = [tmp_path / "1970.xml", tmp_path / "2023.xml"]
    paths[0].write_bytes(xmlbuild.report_bytes(report_id="epoch", begin=0, end=DAY - 1))
    paths[1].write_bytes(xmlbuild.report_bytes(report_id="fine"))
    result = rua("ingest", *paths)
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1].startswith("reports cover 2023-11-14 to 2023-11-15")
