"""The rows reports share, summed over a commit group and written once, when it commits: each
table in one statement, the same sums as report by report, nothing of a refused report."""
import logging
from datetime import timedelta

import pytest

from dnscheck.mail_signatures import MailSignatures
from ingest import commits
from ingest.pipeline import ingest_paths
from store.clock import utcnow
from store.models import DailyRollup, DomainDay, Event, Report, Source, SourceDomain
from tests.factories import epoch, make_domain, make_org
from tests.ingest import xmlbuild as xb
from tests.ingest.test_commits import assert_nothing_half_stored
from tests.ingest.test_source_facts import (assert_domain_facts_match_records,
                                            assert_facts_match_records)
from tests.signed_mail import report_message, rsa_key, signed

DAY = 86400
SHARED = ("daily_rollup", "domain_day", "source_domain", "source")


@pytest.fixture
def one_group(monkeypatch):
    """Every report of a run in one commit group."""
    monkeypatch.setattr(commits, "COMMIT_SECONDS", 3600.0)


def write(folder, name: str, records, **meta) -> str:
    path = folder / f"{name}.xml"
    path.write_bytes(xb.report_bytes(records, report_id=name, **meta))
    return str(path)


def inserts_into(caplog, table: str) -> list:
    return [r.msg for r in caplog.records if isinstance(r.msg, tuple)
            and r.msg[0].startswith(f'INSERT INTO "{table}"')]


def test_a_group_writes_each_shared_table_in_one_statement_with_every_reports_sums(
        database, config, tmp_path, one_group, caplog):
    org = make_org()
    for domain in ("example.com", "example.org"):
        make_domain(org, domain)
    paths = [write(tmp_path, f"r{n}", [xb.record(source_ip=f"192.0.2.{n % 3 + 1}", count=n + 1,
                                                 dkim="fail" if n % 2 else "pass"),
                                       xb.record(source_ip="198.51.100.7", count=2)],
                   domain=("example.com", "example.org")[n % 2],
                   begin=1700000000 + n * DAY, end=1700086399 + n * DAY)
             for n in range(8)]
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        results = list(ingest_paths(paths, config=config))
    assert [r.status for r in results] == ["stored"] * 8
    for table in SHARED:
        assert len(inserts_into(caplog, table)) == 1, table
    assert_facts_match_records(org)
    assert_domain_facts_match_records(org)
    assert_nothing_half_stored()
    # The source of both domains counts both, and is found by either.
    shared = Source.get(Source.ip == "198.51.100.7")
    assert shared.domain_count == 2
    assert "example.com" in shared.search_text and "example.org" in shared.search_text


def test_a_report_refused_midway_adds_nothing_to_its_groups_sums(database, config, tmp_path,
                                                                 one_group):
    make_domain(make_org(), "example.com")
    before = write(tmp_path, "before", [xb.record(count=3)])
    # 600 records: the first 500 are written before the cap refuses the report.
    refused = write(tmp_path, "refused", [xb.record(source_ip=f"203.0.113.{n % 250}", count=1)
                                          for n in range(600)])
    after = write(tmp_path, "after", [xb.record(count=4)], begin=1700000000 + DAY,
                  end=1700086399 + DAY)
    results = list(ingest_paths([before, refused, after], config=config.replace(max_records=550)))
    assert [r.status for r in results] == ["stored", "refused", "stored"]
    assert sorted(r.report_id for r in Report.select()) == ["after", "before"]
    assert_nothing_half_stored()
    assert DailyRollup.select().where(DailyRollup.source_ip.startswith("203.0.113.")).count() == 0


def test_a_sender_new_in_a_group_is_news_of_the_report_that_brought_it(database, config,
                                                                        tmp_path, one_group):
    org = make_org()
    make_domain(org, "example.com")
    today = epoch((utcnow() - timedelta(days=2)).date().isoformat())
    week_ago = write(tmp_path, "week-ago", [xb.record(source_ip="192.0.2.1")],
                     begin=today - 10 * DAY, end=today - 9 * DAY)
    assert [r.status for r in ingest_paths([week_ago], config=config)] == ["stored"]
    first = write(tmp_path, "first", [xb.record(source_ip="192.0.2.1"),
                                      xb.record(source_ip="198.51.100.7", count=5)],
                  begin=today - DAY, end=today - 1)
    second = write(tmp_path, "second", [xb.record(source_ip="198.51.100.7", count=9),
                                        xb.record(source_ip="203.0.113.9", count=2)],
                   begin=today, end=today + DAY - 1)
    assert [r.status for r in ingest_paths([first, second], config=config)] == ["stored"] * 2
    news = {e.dedupe_key: e.detail for e in Event.select().where(Event.type == "new_sender")}
    day = (utcnow() - timedelta(days=2)).date()
    assert news == {
        "new_sender:example.com:198.51.100.7":
            f"198.51.100.7 sent mail as example.com for the first time in a report covering "
            f"{(day - timedelta(days=1)).isoformat()}.",
        "new_sender:example.com:203.0.113.9":
            f"203.0.113.9 sent mail as example.com for the first time in a report covering "
            f"{day.isoformat()}."}
    assert SourceDomain.get(SourceDomain.ip == "198.51.100.7").reports == 2
    day_rows = {row.day: row.reports for row in DomainDay.select()}
    assert sorted(day_rows.values()) == [1, 1, 1]


def test_a_copy_taking_the_place_of_one_stored_in_its_group_leaves_only_its_own_sums(
        dns_config, dns_server, database, tmp_path, one_group):
    key = rsa_key("google.com", "s1", 1024)
    dns_server.zone(key.domain, key.zone_line())
    org = make_org()
    make_domain(org, "example.com")

    def google_report(count: int) -> bytes:
        return xb.report_bytes([xb.record(count=count)], org_name="google.com",
                               report_id="g-1",
                               metadata={"email": "noreply-dmarc-support@google.com"})
    forged, genuine = tmp_path / "forged.eml", tmp_path / "genuine.eml"
    forged.write_bytes(report_message(attachment=google_report(500)))
    genuine.write_bytes(signed(report_message(attachment=google_report(3)), key))
    results = list(ingest_paths([str(forged), str(genuine)], config=dns_config,
                                attest=MailSignatures(dns_config)))
    assert [r.status for r in results] == ["stored", "stored"]
    assert Report.get().total_messages == 3
    assert [(row.reports, row.messages) for row in DomainDay.select()] == [(1, 3)]
    assert [row.messages for row in DailyRollup.select()] == [3]
    assert_facts_match_records(org)
    assert_domain_facts_match_records(org)
