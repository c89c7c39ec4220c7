"""`rua demo` loads a realistic organization through the real ingest path and prints a key."""
from __future__ import annotations

import gzip
from urllib.parse import urlparse

import pytest
from click.testing import CliRunner

from cli import main
from demo import reports as generator
from store import keys
from store.models import ApiKey, Domain, Member, Organization, Record, Report
from webapp import create_app


def ok(result) -> list[str]:
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout.splitlines()


def demo_org():
    return Organization.get(Organization.name == "Demo")


def test_demo_creates_the_organization_its_owner_domains_reports_and_a_key(rua):
    lines = ok(rua("demo", "--days", 3, "--seed", 5))
    org = demo_org()
    assert org.plan == "free"
    owner = Member.get(Member.org == org, Member.email == "owner@demo.example")
    assert owner.role == "owner"
    domains = {d.name: d.source for d in Domain.select().where(Domain.org == org)}
    # Added by hand before any report ("manual"); ingest then sees reports for them too ("both").
    assert set(domains) == set(generator.DOMAINS)
    assert set(domains.values()) <= {"manual", "both"}
    expected = list(generator.generate(seed=5, days=3))
    assert Report.select().where(Report.org == org).count() == len(expected)
    assert Record.select().where(Record.org == org).count() == sum(r.records for r in expected)
    key = lines[-1]
    assert keys.well_formed(key)
    row = ApiKey.get(ApiKey.digest == keys.digest(key))
    assert (row.org_id, row.member_id, row.revoked_at) == (org.id, owner.id, None)
    assert all(key not in line for line in lines[:-1])


def test_demo_reports_went_through_the_parser_in_both_dialects(rua):
    ok(rua("demo", "--days", 2))
    org = demo_org()
    yahoo = Report.get(Report.org == org, Report.org_name == "Yahoo", Report.domain == "example.com")
    assert (yahoo.pct, yahoo.testing, yahoo.np, yahoo.discovery_method) == (None, "n", "reject", "psl")
    assert yahoo.generator
    google = Report.get(Report.org == org, Report.org_name == "google.com", Report.domain == "example.com")
    assert (google.pct, google.testing, google.generator) == (100, "", "")
    assert google.compliant_messages < google.total_messages


def test_demo_data_shows_every_kind_of_sender(rua):
    ok(rua("demo", "--days", 7))
    kinds = {r.classification for r in Record.select(Record.classification).where(Record.org == demo_org())}
    assert kinds == {"authenticated", "likely_forwarded", "suspicious", "needs_review"}
    sources = {r.source_ip for r in Record.select(Record.source_ip).where(Record.org == demo_org())}
    assert any(":" in ip for ip in sources)


def test_a_second_run_adds_no_data_and_prints_another_working_key_revoking_the_first(rua):
    first = ok(rua("demo", "--days", 2))[-1]
    org = demo_org()
    reports = Report.select().where(Report.org == org).count()
    records = Record.select().where(Record.org == org).count()
    lines = ok(rua("demo", "--days", 2))
    second = lines[-1]
    assert second != first and keys.well_formed(second)
    assert any("already loaded" in line for line in lines)
    assert Organization.select().where(Organization.name == "Demo").count() == 1
    assert Member.select().where(Member.org == org).count() == 1
    assert Domain.select().where(Domain.org == org).count() == len(generator.DOMAINS)
    assert Report.select().where(Report.org == org).count() == reports
    assert Record.select().where(Record.org == org).count() == records
    for key in (first, second):
        assert ApiKey.get(ApiKey.digest == keys.digest(key)).org_id == org.id
    # One working demo key at a time, and none for ever.
    assert "revoked 1 earlier demo key(s)" in lines
    old, new = (ApiKey.get(ApiKey.digest == keys.digest(key)) for key in (first, second))
    assert old.revoked_at is not None and new.revoked_at is None
    assert (new.expires_at - new.created_at).days == 7


def test_records_mode_writes_one_large_report_and_leaves_the_database_alone(rua, tmp_path):
    output = tmp_path / "big.xml.gz"
    lines = ok(rua("demo", "--records", 250, "--output", output))
    assert "250 records" in lines[-1]
    text = gzip.decompress(output.read_bytes()).decode()
    assert text.count("<record>") == 250
    assert Organization.select().where(Organization.name == "Demo").count() == 0


@pytest.mark.parametrize("args", [["--records", "10"], ["--output", "x.xml"]])
def test_records_and_output_go_together(rua, args):
    result = rua("demo", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("rua: error: ") and "--records and --output" in result.stderr
    assert result.stdout == ""


def test_help_explains_every_option():
    text = CliRunner().invoke(main, ["demo", "--help"]).stdout
    for option in ("--seed", "--days", "--records", "--output", "--dialect"):
        assert option in text
    assert "last line" in text


def test_the_printed_key_reads_the_demo_data_from_the_api(rua, config):
    key = ok(rua("demo", "--days", 2))[-1]
    stored = Report.select().where(Report.org == demo_org()).count()
    client = create_app(config).test_client()
    response = client.get(urlparse(config.base_url).path + "/statistics",
                          headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.data
    assert response.json["total_reports"] == stored > 0
