"""Storing a parsed report: routing, duplicates, totals, records, rollups, domains, rollback."""
import datetime as dt
import threading
import tracemalloc

import pytest
from peewee import SqliteDatabase, fn

from ingest import record_writer, storing
from ingest.model import ReportError
from ingest.storing import store_report
from store.clock import to_epoch
from store.models import DailyRollup, Domain, DomainDay, Organization, Record, Report, Source
from tests.factories import make_domain, make_org, make_record, make_report, parsed_report
from tests.store.test_report_plans import _reports_of_domains, plan

DAY = to_epoch(dt.datetime(2024, 3, 5))
FAIL = {"dkim": "fail", "spf": "fail", "auth_dkim": None, "auth_spf": None}


def stored_counts():
    return (Report.select().count(), Record.select().count(), DailyRollup.select().count(),
            DomainDay.select().count())


# Routing --------------------------------------------------------------------------------------

def test_a_report_routes_to_the_org_monitoring_its_policy_domain(database):
    org, other = make_org(), make_org()
    make_domain(org, "example.com")
    make_domain(other, "example.org")
    assert store_report(parsed_report("example.com")).report.org_id == org.id


def test_a_subdomain_routes_by_its_organizational_domain(database):
    org = make_org()
    make_domain(org, "example.co.uk")
    stored = store_report(parsed_report("mail.example.co.uk"))
    assert stored.report.org_id == org.id
    assert stored.report.domain == "mail.example.co.uk"


def test_an_exact_match_wins_over_the_organizational_domain(database):
    parent, child = make_org(), make_org()
    make_domain(parent, "example.com")
    make_domain(child, "mail.example.com")
    assert store_report(parsed_report("mail.example.com")).report.org_id == child.id


def test_a_report_nobody_monitors_is_refused_as_unroutable(database):
    make_domain(make_org(), "example.org")
    with pytest.raises(ReportError, match="^unroutable: no organization monitors example.com$"):
        store_report(parsed_report("example.com"))
    assert stored_counts() == (0, 0, 0, 0)


def test_a_domain_monitored_by_several_orgs_is_refused_naming_them(database):
    make_domain(make_org("Beta"), "example.com")
    make_domain(make_org("Alpha"), "example.com")
    with pytest.raises(ReportError, match=r"several organizations \(Alpha, Beta\).*--org"):
        store_report(parsed_report("example.com"))
    assert stored_counts() == (0, 0, 0, 0)


def test_a_routed_report_sent_again_is_a_duplicate_of_the_one_stored(database):
    org = make_org()
    make_domain(org, "example.com")
    first = store_report(parsed_report("example.com", report_id="r1"))
    again = store_report(parsed_report("example.com", report_id="r1"))
    assert (first.status, again.status) == ("stored", "duplicate")
    assert again.report.id == first.report.id and Report.select().count() == 1


def test_a_routed_report_updates_its_domain_in_the_org_it_went_to(database):
    org, other = make_org(), make_org()
    make_domain(org, "example.com", dkim_selectors=["old"])
    make_domain(other, "example.org")
    store_report(parsed_report("example.com"))     # its record signed by example.com, s1
    row = Domain.get(Domain.org == org, Domain.name == "example.com")
    assert (row.source, row.dkim_selectors) == ("both", ["old", "s1"])
    assert Domain.select().count() == 2


def test_routing_reads_the_domain_and_the_report_under_its_key_by_their_indexes(database):
    org_id = _reports_of_domains(database, domains=20, days=10)   # Postgres plans by them
    make_domain(org_id, "d1.example")
    found = plan(storing._ARRIVING.build(name="d1.example", key="1-1"))
    assert {"domain_name", "report_org_id_dedupe_key"} <= found.indexes, found


@pytest.mark.parametrize("how", ["row", "id", "lower-case id", "name"])
def test_org_given_skips_routing(database, how):
    org = make_org("Acme")
    value = {"row": org, "id": org.id, "lower-case id": org.id.lower(), "name": "Acme"}[how]
    assert store_report(parsed_report("unmonitored.example"), org=value).report.org_id == org.id


def test_policy_domain_is_normalized_and_an_invalid_one_refused(database):
    org = make_org()
    assert make_report(org, "Example.COM.").domain == "example.com"
    with pytest.raises(ReportError, match="policy domain"):
        store_report(parsed_report("not a domain"), org=org)


# Duplicates -----------------------------------------------------------------------------------

def test_a_resent_report_is_a_duplicate_stored_once_and_counted_once(database):
    org = make_org()
    first = store_report(parsed_report(report_id="r1", records=[{"count": 7}]), org=org)
    again = store_report(parsed_report(report_id="r1", records=[{"count": 7}]), org=org)
    assert (first.status, again.status) == ("stored", "duplicate")
    assert again.report.id == first.report.id
    assert stored_counts() == (1, 1, 1, 1)
    assert DailyRollup.get().messages == 7 and DomainDay.get().reports == 1


def test_same_report_id_from_another_reporter_or_domain_is_not_a_duplicate(database):
    org = make_org()
    make_report(org, report_id="r1", org_name="google.com")
    make_report(org, report_id="r1", org_name="Yahoo")
    make_report(org, "example.org", report_id="r1", org_name="google.com")
    assert Report.select().count() == 3


def test_the_same_report_for_two_orgs_is_stored_for_each(database):
    make_report(make_org(), report_id="r1")
    make_report(make_org(), report_id="r1")
    assert Report.select().count() == 2


# The report row -------------------------------------------------------------------------------

def test_every_metadata_and_policy_field_is_kept(database):
    meta = dict(org_name="google.com", report_id="123", date_begin=DAY, date_end=DAY + 86399,
                version="2.0", email="noreply@google.com", extra_contact_info="https://x",
                errors=["bad tag"], generator="gen 1", adkim="s", aspf="r", p="reject",
                sp="quarantine", np="none", pct=50, fo="1", testing="n", psd="n",
                discovery_method="treewalk")
    report = Report.get_by_id(make_report(make_org(), "example.com", **meta).id)
    for name, value in meta.items():
        assert getattr(report, name) == value, name
    assert (report.day_begin, report.day_end) == (dt.date(2024, 3, 5), dt.date(2024, 3, 5))


def test_totals_rate_and_failure_summary_come_from_the_records(database):
    records = [{"count": 2}, {"count": 1, "spf": "fail"}, {"count": 3, "dkim": "fail"},
               {"count": 4, **FAIL}]
    report = Report.get_by_id(make_report(make_org(), records=records).id)
    assert (report.total_messages, report.compliant_messages, report.record_count) == (10, 6, 4)
    assert report.compliance_rate == 60.0
    assert report.failure_summary == {"spf_only": 1, "dkim_only": 1, "both": 1, "total": 4}


def test_compliance_rate_is_a_percentage_rounded_to_two_decimals(database):
    report = make_report(make_org(), records=[{"count": 1}, {"count": 2, **FAIL}])
    assert Report.get_by_id(report.id).compliance_rate == 33.33


def test_a_report_of_zero_messages_has_rate_zero(database):
    report = make_report(make_org(), records=[{"count": 0}])
    assert (report.total_messages, report.compliance_rate) == (0, 0.0)


def test_a_window_outside_any_calendar_is_refused(database):
    with pytest.raises(ReportError, match="date range"):
        store_report(parsed_report(date_begin=10**20, date_end=10**20 + 1), org=make_org())


def test_parse_warnings_are_read_after_the_records_and_none_when_empty(database):
    org = make_org()
    parsed = parsed_report(records=[{"count": 1}, {"count": 2}])
    inner = parsed.records

    def warn_while_streaming():
        for record in inner:
            parsed.warnings.append(f"record of {record.count} had an oddity")
            yield record
    parsed.records = warn_while_streaming()
    report = Report.get_by_id(store_report(parsed, org=org).report.id)
    assert report.parse_warnings == ["record of 1 had an oddity", "record of 2 had an oddity"]
    assert Report.get_by_id(make_report(org).id).parse_warnings is None


def test_text_longer_than_its_column_is_cut_with_a_warning(database):
    report = make_report(make_org(), org_name="x" * 300, records=[{"envelope_to": "y" * 400}])
    report = Report.get_by_id(report.id)
    assert len(report.org_name) == 255 and len(Record.get().envelope_to) == 253
    assert any("org_name" in w for w in report.parse_warnings)
    assert any("envelope_to" in w for w in report.parse_warnings)


def test_received_at_is_kept_when_given(database):
    when = dt.datetime(2024, 3, 6, 8, 30)
    assert Report.get_by_id(make_report(make_org(), received_at=when).id).received_at == when


# Records --------------------------------------------------------------------------------------

def test_records_keep_their_order_alignment_and_classification(database):
    records = [{"source_ip": "192.0.2.1"},
               {"source_ip": "192.0.2.2", **FAIL},
               {"source_ip": "192.0.2.3", "dkim": "fail", "spf": "fail",
                "auth_dkim": [{"Domain": "example.com", "Selector": "s", "Result": "fail",
                               "HumanResult": ""}],
                "auth_spf": [{"Domain": "bounce.other.net", "Scope": "mfrom", "Result": "pass",
                              "HumanResult": ""}]}]
    report = make_report(make_org(), "example.com", records=records)
    rows = list(Record.select().where(Record.report == report.id).order_by(Record.ordinal))
    assert [r.ordinal for r in rows] == [0, 1, 2]
    assert [r.source_ip for r in rows] == ["192.0.2.1", "192.0.2.2", "192.0.2.3"]
    assert [r.classification for r in rows] == ["authenticated", "suspicious", "likely_forwarded"]
    assert rows[0].alignment == {"spf": [True], "dkim": [True]}
    assert rows[1].alignment == {"spf": None, "dkim": None}
    assert rows[2].alignment == {"spf": [False], "dkim": [True]}
    assert rows[2].auth_spf[0]["Domain"] == "bounce.other.net"


@pytest.mark.parametrize("count", [-1, 2**63])
def test_a_count_out_of_range_refuses_the_report(database, count):
    with pytest.raises(ReportError, match="out of range"):
        make_report(make_org(), records=[{"count": count}])
    assert stored_counts() == (0, 0, 0, 0)


def test_a_report_without_records_is_refused(database):
    with pytest.raises(ReportError, match="no <record>"):
        make_report(make_org(), records=[])


def test_a_report_error_mid_stream_rolls_the_whole_report_back(database):
    org = make_org()
    parsed = parsed_report(report_id="broken")

    def records_then_error():
        for n in range(1200):       # past two insert batches
            yield make_record(source_ip=f"10.0.{n // 250}.{n % 250}")
        raise ReportError("record 1201: count is not a number")
    parsed.records = records_then_error()
    with pytest.raises(ReportError, match="record 1201"):
        store_report(parsed, org=org)
    assert stored_counts() == (0, 0, 0, 0)
    assert Domain.select().count() == 0
    assert Organization.get_by_id(org.id).dirty_since is None
    # The same report, sent again intact, is stored rather than called a duplicate.
    assert store_report(parsed_report(report_id="broken"), org=org).status == "stored"


# Rollups --------------------------------------------------------------------------------------

def test_daily_rollups_equal_sums_over_the_records(database):
    org = make_org()
    forwarded = {"dkim": "fail", "spf": "fail", "reasons": [{"Type": "mailing_list", "Comment": ""}]}
    first = [{"source_ip": "192.0.2.1", "count": 5},
             {"source_ip": "192.0.2.1", "count": 3, "spf": "fail"},
             {"source_ip": "192.0.2.2", "count": 4, **forwarded}]
    second = [{"source_ip": "192.0.2.1", "count": 2, "dkim": "fail"},
              {"source_ip": "192.0.2.3", "count": 6, **FAIL}]
    for records in (first, second):
        make_report(org, records=records, date_begin=DAY, date_end=DAY + 86400)
    rows = {r.source_ip: r for r in DailyRollup.select()}
    assert {r.day for r in rows.values()} == {dt.date(2024, 3, 5)}
    for ip, row in rows.items():
        records = list(Record.select().where(Record.source_ip == ip))
        assert row.messages == sum(r.count for r in records)
        assert row.compliant == sum(r.count for r in records if "pass" in (r.dkim, r.spf))
        assert row.spf_aligned_pass == sum(r.count for r in records if r.spf == "pass")
        assert row.dkim_aligned_pass == sum(r.count for r in records if r.dkim == "pass")
        assert row.forwarded == sum(r.count for r in records if r.classification == "likely_forwarded")
        assert row.reports == len({r.report_id for r in records})
    assert (rows["192.0.2.1"].messages, rows["192.0.2.1"].reports) == (10, 2)
    assert rows["192.0.2.2"].forwarded == 4


def test_rollups_are_per_domain_and_per_midpoint_day(database):
    org = make_org()
    make_report(org, "example.com", date_begin=DAY, date_end=DAY + 86400)
    make_report(org, "example.org", date_begin=DAY, date_end=DAY + 86400)
    make_report(org, "example.com", date_begin=DAY + 86400, date_end=DAY + 2 * 86400)
    keys = sorted((r.domain, r.day.isoformat()) for r in DailyRollup.select())
    assert keys == [("example.com", "2024-03-05"), ("example.com", "2024-03-06"),
                    ("example.org", "2024-03-05")]


def test_domain_day_counts_reports_and_keeps_the_latest_policy(database):
    org = make_org()
    make_report(org, records=[{"count": 3}], date_begin=DAY + 3600, date_end=DAY + 7200,
                p="reject", pct=100, testing="n")
    make_report(org, records=[{"count": 4}], date_begin=DAY, date_end=DAY + 3600,
                p="none", pct=None, testing="y")
    row = DomainDay.get()
    assert (row.reports, row.messages) == (2, 7)
    assert (row.policy_p, row.policy_pct, row.policy_testing) == ("reject", 100, "n")
    make_report(org, date_begin=DAY + 7200, date_end=DAY + 10800, p="quarantine", pct=50)
    row = DomainDay.get()
    assert (row.reports, row.policy_p, row.policy_pct) == (3, "quarantine", 50)


# Domains and the dirty mark -------------------------------------------------------------------

def test_a_new_policy_domain_joins_the_org_as_auto(database):
    org = make_org()
    make_report(org, "mail.example.com")
    row = Domain.get(Domain.org == org, Domain.name == "mail.example.com")
    assert row.source == "auto"


@pytest.mark.parametrize("before, after", [("manual", "both"), ("auto", "auto"), ("both", "both")])
def test_a_domain_already_known_keeps_or_gains_its_source(database, before, after):
    org = make_org()
    make_domain(org, "example.com", source=before)
    make_report(org, "example.com")
    assert Domain.get(Domain.org == org, Domain.name == "example.com").source == after


def test_dkim_selectors_of_the_domain_are_collected_as_a_union(database):
    org = make_org()
    make_domain(org, "example.com", dkim_selectors=["old"])

    def signed(*pairs):
        return {"auth_dkim": [{"Domain": d, "Selector": s, "Result": "pass", "HumanResult": ""}
                              for d, s in pairs]}
    make_report(org, records=[signed(("example.com", "s2"), ("esp.example", "esp1")),
                              signed(("EXAMPLE.com", "S1"))])
    make_report(org, records=[signed(("example.com", "s2"), ("example.com", "s3"))])
    row = Domain.get(Domain.org == org, Domain.name == "example.com")
    assert row.dkim_selectors == ["old", "s1", "s2", "s3"]


def test_storing_marks_the_org_dirty_once(database):
    org = make_org()
    make_report(org)
    first = Organization.get_by_id(org.id).dirty_since
    assert first is not None
    Organization.update(dirty_since=dt.datetime(2020, 1, 1)).where(Organization.id == org.id).execute()
    make_report(org)
    assert Organization.get_by_id(org.id).dirty_since == dt.datetime(2020, 1, 1)


# Size -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_50000_record_report_is_stored_with_memory_bounded(database):
    org = make_org()
    parsed = parsed_report(report_id="big")
    parsed.records = (make_record(source_ip=f"10.0.{n % 4}.{n % 250}", count=n % 9 + 1)
                      for n in range(50_000))
    tracemalloc.start()
    try:
        report = store_report(parsed, org=org).report
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.record_count == Record.select().count() == 50_000
    assert report.total_messages == sum(n % 9 + 1 for n in range(50_000))
    # Holding 50,000 records at once would take tens of MiB; batches of 500 keep it near one.
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_the_same_report_stored_twice_at_once_is_kept_once(database, monkeypatch):
    """Two ingests racing for one report; the first holds its transaction open, so the race
    happens on every run, and the second's look-ups show how it was settled. Postgres: the
    second looks and finds nothing (the first has not committed); whichever insert comes
    second meets the unique key and finds the winner. SQLite: the second's transaction waits for the first's
    write lock (IMMEDIATE), so its one look-up finds the winner."""
    sqlite = isinstance(database, SqliteDatabase)
    org = make_org()
    first_in, second_started, second_looked = (threading.Event(), threading.Event(),
                                               threading.Event())
    outcomes, looks = {}, []
    look_up = storing._stored

    def watched_look_up(org_id, key):
        found = look_up(org_id, key)
        if threading.current_thread().name == "second":
            looks.append(found is not None)
            second_looked.set()
        return found

    monkeypatch.setattr(storing, "_stored", watched_look_up)

    def slow_records(signal):
        for n in range(600):
            if n == 1 and signal:
                first_in.set()      # the first ingest holds its transaction open until the
                # second has started (SQLite: it then waits for the lock) or looked (Postgres)
                assert (second_started if sqlite else second_looked).wait(10)
            yield make_record(source_ip=f"10.1.{n // 250}.{n % 250}")

    def ingest(name, signal):
        with database.connection_context():
            parsed = parsed_report(report_id="raced")
            parsed.records = slow_records(signal)
            if not signal:
                second_started.set()
            outcomes[name] = store_report(parsed, org=org.id).status

    racers = [threading.Thread(target=ingest, args=("first", True), name="first"),
              threading.Thread(target=ingest, args=("second", False), name="second")]
    racers[0].start()
    assert first_in.wait(10)
    racers[1].start()
    for racer in racers:
        racer.join(30)
    assert sorted(outcomes.values()) == ["duplicate", "stored"]
    if sqlite:
        assert outcomes == {"first": "stored", "second": "duplicate"} and looks == [True]
    else:
        # The second looked while the first's report was not committed: the race happened.
        # Which insert wins is then the database's call (a report row follows its records).
        assert looks[0] is False
    assert stored_counts()[:2] == (1, 600)
    assert DailyRollup.select(fn.SUM(DailyRollup.messages)).scalar() == 600


def test_what_enrichment_knows_of_a_source_shapes_its_classification(database):
    org = make_org()
    seen = dt.datetime(2024, 3, 1)
    Source.create(org=org, ip="192.0.2.10", first_seen=seen, last_seen=seen,
                  service_slug="mailchimp", service_kind="esp", abuse_status="clean")
    Source.create(org=org, ip="192.0.2.11", first_seen=seen, last_seen=seen,
                  abuse_status="malicious")
    unsigned = {"dkim": "fail", "spf": "fail", "auth_dkim": None,
                "auth_spf": [{"Domain": "esp.example", "Scope": "mfrom", "Result": "pass",
                              "HumanResult": ""}]}
    broken_key = {"dkim": "fail", "spf": "fail", "auth_spf": None,
                  "auth_dkim": [{"Domain": "example.com", "Selector": "s", "Result": "permerror",
                                 "HumanResult": ""}]}
    make_report(org, records=[{"source_ip": "192.0.2.10", **unsigned},
                              {"source_ip": "192.0.2.12", **unsigned},
                              {"source_ip": "192.0.2.11", **broken_key},
                              {"source_ip": "192.0.2.12", **broken_key}])
    verdicts = [r.classification for r in Record.select().order_by(Record.ordinal)]
    assert verdicts == ["needs_review", "suspicious", "suspicious", "needs_review"]


def test_only_the_senders_of_records_failing_dmarc_are_looked_up(database, monkeypatch):
    """A DMARC pass is authenticated whatever is known of its sender: a report of passing
    records reads nothing of them."""
    asked = []
    look_up = record_writer.enrichment
    monkeypatch.setattr(record_writer, "enrichment",
                        lambda org_id, ips: asked.append(ips) or look_up(org_id, ips))
    org = make_org()
    make_report(org, records=[{"source_ip": "192.0.2.20"}, {"source_ip": "192.0.2.21", **FAIL}])
    make_report(org, records=[{"source_ip": "192.0.2.22"}, {"source_ip": "192.0.2.22"}])
    assert asked == [["192.0.2.21"]]
    verdicts = [r.classification for r in Record.select().order_by(Record.ordinal)]
    assert verdicts.count("authenticated") == 3


# Values longer than their columns -------------------------------------------------------------

def test_a_value_longer_than_its_column_is_cut_with_one_warning_per_column(database):
    org = make_org()
    long_from = "a" * 300 + ".example"
    report = make_report(org, org_name="r" * 400, records=[
        {"envelope_from": long_from, "source_ip": "1" * 100},
        {"envelope_from": long_from},
        {"disposition": None}])
    rows = list(Record.select().order_by(Record.ordinal))
    assert [len(r.envelope_from) for r in rows[:2]] == [253, 253]
    assert (len(rows[0].source_ip), rows[2].disposition) == (64, "")
    assert len(Report.get_by_id(report.id).org_name) == 255
    assert Report.get_by_id(report.id).parse_warnings == [
        "org_name was longer than 255 characters and was shortened",
        "source_ip was longer than 64 characters and was shortened",
        "envelope_from was longer than 253 characters and was shortened"]
