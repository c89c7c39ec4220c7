"""Source facts kept by ingest: each source's totals equal the sums over its stored records."""
import logging
from collections import defaultdict

import pytest
from click.testing import CliRunner

from cli import main
from ingest.pipeline import ingest_paths
from ingest.storing import store_report
from store import db, is_postgres
from store.addresses import canonical_ip, ip_key
from store.clock import from_epoch
from store.models import Event, Record, Report, SchemaVersion, Source, SourceDomain
from store.migrations import migrate
from tests.factories import epoch, make_org, make_report, parsed_report
from tests.ingest import xmlbuild

DAY = 86400


def sums_over_records(org) -> dict:
    """Per canonical IP: the figures a Source row must hold, computed from the records."""
    sums = defaultdict(lambda: {"messages": 0, "compliant": 0, "spf_fail": 0, "dkim_fail": 0,
                                "domains": set(), "first": None, "last": None})
    rows = (Record.select(Record.source_ip, Record.count, Record.dkim, Record.spf, Report.domain,
                          Report.date_begin, Report.date_end)
            .join(Report, on=(Record.report == Report.id)).where(Record.org == org).tuples())
    for ip, count, dkim, spf, domain, begin, end in rows:
        s = sums[canonical_ip(ip)]
        s["messages"] += count
        s["compliant"] += count if "pass" in (dkim, spf) else 0
        s["spf_fail"] += count if spf != "pass" else 0
        s["dkim_fail"] += count if dkim != "pass" else 0
        s["domains"].add(domain)
        s["first"] = begin if s["first"] is None else min(s["first"], begin)
        s["last"] = end if s["last"] is None else max(s["last"], end)
    return sums


def per_domain_over_records(org) -> dict:
    """Per (canonical IP, domain): the figures a SourceDomain row must hold, from the records."""
    sums = defaultdict(lambda: {"messages": 0, "compliant": 0, "spf_fail": 0, "dkim_fail": 0,
                                "forwarded": 0, "quarantined": 0, "rejected": 0,
                                "reports": set(), "first": None, "last": None})
    rows = (Record.select(Record.source_ip, Record.count, Record.dkim, Record.spf,
                          Record.classification, Record.disposition, Report.id, Report.domain,
                          Report.date_begin, Report.date_end)
            .join(Report, on=(Record.report == Report.id)).where(Record.org == org).tuples())
    for ip, count, dkim, spf, verdict, disposition, report, domain, begin, end in rows:
        s = sums[(canonical_ip(ip), domain)]
        s["messages"] += count
        s["compliant"] += count if "pass" in (dkim, spf) else 0
        s["spf_fail"] += count if spf != "pass" else 0
        s["dkim_fail"] += count if dkim != "pass" else 0
        s["forwarded"] += count if verdict == "likely_forwarded" else 0
        s["quarantined"] += count if disposition == "quarantine" else 0
        s["rejected"] += count if disposition == "reject" else 0
        s["reports"].add(report)
        s["first"] = begin if s["first"] is None else min(s["first"], begin)
        s["last"] = end if s["last"] is None else max(s["last"], end)
    return sums


def assert_domain_facts_match_records(org):
    """Every SourceDomain figure, and each Source's compliance rate, as the records give them."""
    expected = per_domain_over_records(org)
    rows = list(SourceDomain.select().where(SourceDomain.org == org))
    assert {(row.ip, row.domain) for row in rows} == set(expected)
    for row in rows:
        e = expected[(row.ip, row.domain)]
        assert (row.messages, row.compliant, row.spf_fail, row.dkim_fail, row.forwarded,
                row.quarantined, row.rejected, row.reports) == (
            e["messages"], e["compliant"], e["spf_fail"], e["dkim_fail"], e["forwarded"],
            e["quarantined"], e["rejected"], len(e["reports"])), (row.ip, row.domain)
        assert (row.first_seen, row.last_seen) == (from_epoch(e["first"]), from_epoch(e["last"]))
    for source in Source.select().where(Source.org == org):
        rate = 100.0 * source.compliant / source.messages if source.messages else 0.0
        assert source.compliance_rate == pytest.approx(rate), source.ip


def assert_facts_match_records(org):
    expected = sums_over_records(org)
    rows = list(Source.select().where(Source.org == org))
    assert {row.ip for row in rows} == set(expected)
    for row in rows:
        e = expected[row.ip]
        assert (row.messages, row.compliant, row.spf_fail, row.dkim_fail) == (
            e["messages"], e["compliant"], e["spf_fail"], e["dkim_fail"]), row.ip
        assert row.auth_failures == e["spf_fail"] + e["dkim_fail"]
        assert row.domain_count == len(e["domains"])
        assert (row.first_seen, row.last_seen) == (from_epoch(e["first"]), from_epoch(e["last"]))
        assert row.ip_key == ip_key(row.ip)
        per_domain = SourceDomain.select().where(SourceDomain.org == org, SourceDomain.ip == row.ip)
        assert {d.domain for d in per_domain} == e["domains"]
        assert sum(d.messages for d in per_domain) == row.messages
        assert sum(d.spf_fail for d in per_domain) == row.spf_fail


FAILING = {"source_ip": "198.51.100.7", "count": 5, "dkim": "fail", "spf": "fail",
           "disposition": "reject"}


def test_totals_add_up_over_reports_and_domains_and_a_resent_report_counts_once(database):
    org = make_org()
    again = parsed_report("example.com", [FAILING, {"count": 3}], report_id="same",
                          org_name="google.com")
    store_report(again, org=org)
    assert store_report(parsed_report("example.com", [FAILING, {"count": 3}], report_id="same",
                                      org_name="google.com"), org=org).status == "duplicate"
    make_report(org, "example.org", [{**FAILING, "spf": "pass", "count": 2}])
    make_report(org, "example.org", [{"source_ip": "192.0.2.1", "dkim": "fail", "count": 4,
                                      "disposition": "quarantine"}])
    assert_facts_match_records(org)
    assert_domain_facts_match_records(org)
    source = Source.get(Source.org == org, Source.ip == "198.51.100.7")
    assert (source.messages, source.compliant, source.domain_count) == (7, 2, 2)
    assert source.search_text == "198.51.100.7 example.com example.org"   # each domain once
    assert round(source.compliance_rate, 2) == 28.57
    held = {(d.domain, d.ip): (d.quarantined, d.rejected, d.reports)
            for d in SourceDomain.select().where(SourceDomain.org == org)}
    assert held[("example.com", "198.51.100.7")] == (0, 5, 1)
    assert held[("example.org", "192.0.2.1")] == (4, 0, 1)


def test_on_postgres_a_known_sources_next_report_updates_its_rows_in_place(database):
    """No index covers what a report changes, so every update is HOT: no index grows."""
    if not is_postgres():
        pytest.skip("HOT updates are Postgres's")
    org = make_org()
    make_report(org, "example.com", [FAILING, {"count": 3}], report_id="first")
    with db.atomic():       # this transaction's own counts, exact and at once
        make_report(org, "example.com", [FAILING, {"count": 3}], report_id="second")
        counts = db.execute_sql(
            "SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables "
            "WHERE relname IN ('source', 'source_domain') ORDER BY relname").fetchall()
    assert counts == [("source", 2, 2), ("source_domain", 2, 2)]


def test_reports_stored_in_one_group_add_up_as_stored_one_by_one(database, config, tmp_path):
    """Many reports of overlapping sources and domains, committed together (ingest/commits.py):
    each source's and each source-and-domain's figures are the sums over their records."""
    org = make_org()
    paths = []
    for n in range(60):
        rows = [xmlbuild.record(source_ip=f"192.0.2.{(n + r) % 7}", count=n % 5 + r + 1,
                                dkim="pass" if (n + r) % 3 else "fail",
                                spf="fail" if r == 1 else "pass",
                                disposition=("none", "quarantine", "reject")[(n + r) % 3])
                for r in range(3)]
        path = tmp_path / f"{n}.xml"
        path.write_bytes(xmlbuild.report_bytes(rows, report_id=f"g-{n}",
                                               domain=("example.com", "example.org")[n % 2],
                                               begin=1700000000 + n * DAY,
                                               end=1700086399 + n * DAY))
        paths.append(str(path))
    results = list(ingest_paths(paths + paths[:5], config=config, org=org))
    assert [r.status for r in results] == ["stored"] * 60 + ["duplicate"] * 5
    assert_facts_match_records(org)
    assert_domain_facts_match_records(org)


def test_a_report_writes_the_rows_it_may_share_in_address_order(database, caplog):
    """Two reports stored at once then lock their shared rows in one order: neither waits for
    the other in a circle, which Postgres would end by refusing one of them."""
    ips = ["203.0.113.9", "198.51.100.7", "192.0.2.200", "192.0.2.3"]
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        make_report(make_org(), records=[{"source_ip": ip} for ip in ips])
    for table in ("daily_rollup", "source_domain", "source"):
        statements = [r.msg for r in caplog.records if isinstance(r.msg, tuple)
                      and r.msg[0].startswith(f'INSERT INTO "{table}"')]
        assert len(statements) == 1, table
        assert [p for p in statements[0][1] if p in ips] == sorted(ips), table


def test_every_spelling_of_an_ipv6_address_is_one_source(database):
    org = make_org()
    make_report(org, records=[{"source_ip": "2001:DB8:0:0::1", "count": 2},
                              {"source_ip": "2001:db8::1", "count": 3},
                              {"source_ip": "::ffff:192.0.2.9", "count": 1}])
    assert {s.ip: s.messages for s in Source.select()} == {"2001:db8::1": 5, "192.0.2.9": 1}
    # The texts records keep, so the source finds them again (enrichment re-classifies them).
    assert {s.ip: s.spellings for s in Source.select()} == {
        "2001:db8::1": ["2001:DB8:0:0::1"], "192.0.2.9": ["::ffff:192.0.2.9"]}
    assert_facts_match_records(org)


def test_ip_keys_sort_addresses_numerically_ipv4_first():
    spelled = ["2001:db8::1", "10.0.0.1", "9.255.255.255", "::1", "192.0.2.1"]
    assert sorted(spelled, key=ip_key) == ["9.255.255.255", "10.0.0.1", "192.0.2.1", "::1",
                                           "2001:db8::1"]


def test_a_new_sender_is_announced_once_the_domain_has_a_week_of_history(database):
    org = make_org()
    start = epoch("2024-03-01")
    make_report(org, records=[{"source_ip": "192.0.2.1"}], date_begin=start,
                date_end=start + DAY)
    make_report(org, records=[{"source_ip": "192.0.2.2"}], date_begin=start + 3 * DAY,
                date_end=start + 4 * DAY)
    assert not Event.select().exists()     # three days of history: every sender is still new
    for report in range(2):
        make_report(org, records=[{"source_ip": "192.0.2.3"}, {"source_ip": "192.0.2.1"}],
                    date_begin=start + 9 * DAY, date_end=start + 10 * DAY,
                    received_at=from_epoch(start + 10 * DAY + 3600))
    [event] = Event.select()
    assert (event.type, event.domain, event.dedupe_key) == (
        "new_sender", "example.com", "new_sender:example.com:192.0.2.3")


@pytest.mark.parametrize("late_days, announced", [(7, True), (8, False), (4000, False)])
def test_only_a_report_that_ended_in_the_last_week_makes_a_new_sender_news(database, late_days,
                                                                          announced):
    """An archive of 2013 reports imported today raises no new_sender about 2013."""
    org = make_org()
    start = epoch("2013-03-01")
    for n, ip in enumerate(("192.0.2.1", "192.0.2.2")):
        end = start + (10 * n + 1) * DAY
        make_report(org, records=[{"source_ip": ip}], date_begin=end - DAY, date_end=end,
                    received_at=from_epoch(end + late_days * DAY))
    assert Event.select().where(Event.type == "new_sender").exists() is announced


VERSION_5_SOURCE = """CREATE TABLE "source" ("id" {id}, "org_id" VARCHAR(26) NOT NULL
  REFERENCES "organization" ("id") ON DELETE CASCADE, "ip" VARCHAR(64) NOT NULL,
  "first_seen" TIMESTAMP NOT NULL, "last_seen" TIMESTAMP NOT NULL, "ptr" VARCHAR(253),
  "service_slug" VARCHAR(64), "service_name" VARCHAR(128), "service_icon" VARCHAR(64),
  "abuse_status" VARCHAR(16) NOT NULL, "authorized" BOOLEAN NOT NULL, "country" VARCHAR(2),
  "enriched_at" TIMESTAMP)"""


def test_a_store_of_version_5_gets_its_source_facts_from_the_records(database):
    org = make_org()
    make_report(org, records=[FAILING, {"source_ip": "2001:db8::7", "count": 2}])
    make_report(org, "example.org", records=[FAILING])
    expected = {(s.ip, s.messages, s.domain_count) for s in Source.select()}
    SourceDomain.delete().execute()
    Source.delete().execute()
    database.execute_sql('DROP TABLE "source_domain"')
    database.execute_sql('DROP TABLE "source"')
    database.execute_sql(VERSION_5_SOURCE.format(
        id="BIGSERIAL PRIMARY KEY" if is_postgres() else "INTEGER PRIMARY KEY"))
    SchemaVersion.delete().where(SchemaVersion.version >= 6).execute()
    assert migrate(database)[0][0] == 6
    assert {(s.ip, s.messages, s.domain_count) for s in Source.select()} == expected
    assert_facts_match_records(org)
    assert Source.get(Source.ip == "198.51.100.7").search_text == (
        "198.51.100.7 example.com example.org")


@pytest.mark.slow
def test_every_source_of_the_corpus_adds_up_to_its_records(database, config, corpus_dir):
    org = make_org("corpus-sources")
    result = CliRunner().invoke(main, ["ingest", "--org", "corpus-sources", "--format", "json",
                                       str(corpus_dir / "aggregate")],
                                env={"RUA_DATABASE_URL": config.database_url})
    db.initialize(database)   # the command pointed the shared proxy at its own connection
    assert Source.select().where(Source.org == org).count() > 100, result.output[-500:]
    assert_facts_match_records(org)
    assert_domain_facts_match_records(org)
