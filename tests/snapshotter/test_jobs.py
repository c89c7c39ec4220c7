"""A refresh on a real store: blobs agree with figures summed straight from the records."""
from datetime import timedelta

import orjson

from snapshotter import jobs, refreshes
from store import snapshots
from store.models import Organization, ScoreHistory, Snapshot
from tests.factories import make_domain, make_org
from tests.snapshotter.reports import NOW, TODAY, mixed_org, rate, report_on, straight_from_records

WINDOW_START = TODAY - timedelta(days=29)


def blob(org, kind, variant=""):
    return orjson.loads(snapshots.get(org.id, kind, variant).body)


def test_refreshed_scores_equal_figures_summed_straight_from_the_records(database):
    org = make_org()
    mixed_org(org)
    jobs.refresh_org(org.id, NOW)
    doc = blob(org, "compliance")
    direct = straight_from_records(org, WINDOW_START, TODAY)
    assert doc["total_messages"] == direct["messages"]
    assert doc["compliance_rate"] == rate(direct["compliant"], direct["messages"])
    assert doc["spf_pass_rate"] == rate(direct["spf"], direct["messages"])
    assert doc["dkim_pass_rate"] == rate(direct["dkim"], direct["messages"])
    for entry in doc["domain_scores"]:
        one = straight_from_records(org, WINDOW_START, TODAY, entry["domain"])
        assert (entry["total_messages"], entry["compliance_rate"]) == \
            (one["messages"], rate(one["compliant"], one["messages"]))
        assert blob(org, "compliance", entry["domain"])["domain_scores"] == [entry]
    overview = blob(org, "overview")["org_health"]
    assert overview["total_messages"] == direct["messages"]
    assert overview["unique_source_ips"] == direct["ips"] == 4


def test_trend_points_equal_each_days_records_and_span_365_days(database):
    org = make_org()
    mixed_org(org)
    jobs.refresh_org(org.id, NOW)
    points = blob(org, "trends")
    assert len(points) == 365 and points[-1]["date"] == TODAY.isoformat()
    for point in points[-40:]:
        day = TODAY.fromisoformat(point["date"])
        direct = straight_from_records(org, day, day)
        assert (point["total_messages"], point["compliant_messages"]) == (direct["messages"], direct["compliant"])
    domain_points = blob(org, "trends", "example.org")
    assert sum(p["reports"] for p in domain_points) == 7


def test_one_more_day_of_reports_sums_only_that_day_again(database):
    org = make_org()
    mixed_org(org)
    first = jobs.refresh_org(org.id, NOW)
    assert first.days_summed == 21
    report_on(org, "example.com", TODAY - timedelta(days=1), [{"count": 1000}])
    second = jobs.refresh_org(org.id, NOW)
    assert second.days_summed == 1
    direct = straight_from_records(org, WINDOW_START, TODAY)
    assert blob(org, "compliance")["total_messages"] == direct["messages"]
    assert jobs.refresh_org(org.id, NOW).days_summed == 0


def test_ingest_marks_the_organization_dirty_and_a_refresh_clears_it(database, config):
    org, other = make_org(), make_org()
    report_on(org, "example.com", TODAY, [{"count": 1}])
    assert Organization.get_by_id(org.id).dirty_since is not None
    assert [r.org_id for r in refreshes.refresh_dirty(NOW, config)] == [org.id]
    assert Organization.get_by_id(org.id).dirty_since is None
    assert refreshes.refresh_dirty(NOW, config) == []
    assert snapshots.get(other.id, "overview") is None


def test_first_run_back_fills_history_for_days_with_reports(database):
    org = make_org()
    mixed_org(org)
    jobs.refresh_org(org.id, NOW)
    days = [r.day for r in ScoreHistory.select().where(ScoreHistory.org == org).order_by(ScoreHistory.day)]
    assert days == sorted({TODAY - timedelta(days=n) for n in range(0, 40, 3)})
    points = blob(org, "history")
    assert [p["snapshot_date"] for p in points] == [d.isoformat() for d in days]
    jobs.refresh_org(org.id, NOW + timedelta(days=1))
    # The next day has no reports yet: no row for it, until it is complete.
    assert ScoreHistory.select().where(ScoreHistory.org == org).count() == len(days)
    jobs.refresh_org(org.id, NOW + timedelta(days=2))
    assert ScoreHistory.select().where(ScoreHistory.org == org).count() == len(days) + 1


def test_the_daily_job_writes_yesterdays_final_row(database, config):
    org = make_org()
    report_on(org, "example.com", TODAY, [{"count": 4}])
    jobs.refresh_org(org.id, NOW)
    report_on(org, "example.com", TODAY, [{"count": 6, "dkim": "fail", "spf": "fail"}])
    refreshes.daily(NOW + timedelta(days=1), config)
    row = ScoreHistory.get(ScoreHistory.org == org, ScoreHistory.day == TODAY)
    assert (row.total_messages, row.compliance_rate) == (10, 40.0)


def test_health_blobs_exist_for_monitored_domains_only_and_leave_with_them(database):
    org = make_org()
    quiet = make_domain(org, "quiet.example")
    report_on(org, "example.com", TODAY, [{"count": 2}])
    jobs.refresh_org(org.id, NOW)
    health = {v for (v,) in Snapshot.select(Snapshot.variant)
              .where(Snapshot.org == org, Snapshot.kind == "health").tuples()}
    assert health == {"example.com", "quiet.example"}
    assert blob(org, "health", "quiet.example")["grade"] == "N/A"
    quiet.delete_instance()
    jobs.refresh_org(org.id, NOW)
    assert snapshots.get(org.id, "health", "quiet.example") is None


def test_blob_etag_is_the_content_hash_and_computed_at_the_refresh_time(database):
    org = make_org()
    jobs.refresh_org(org.id, NOW)
    stored = snapshots.get(org.id, "overview")
    assert stored.etag == snapshots.etag_of(stored.body) and stored.computed_at == NOW
    assert orjson.loads(stored.body)["org_health"]["has_data"] is False


def test_the_hourly_health_refresh_leaves_a_dirty_organization_dirty(database, config):
    org = make_org()
    make_domain(org, "example.com")
    report_on(org, "example.com", TODAY, [{"count": 2}])
    jobs.refresh_org(org.id, NOW, kinds=("health",))
    assert Organization.get_by_id(org.id).dirty_since is not None
    assert snapshots.get(org.id, "health", "example.com") is not None
    assert snapshots.get(org.id, "overview") is None
    assert [r.org_id for r in refreshes.refresh_dirty(NOW, config)] == [org.id]


def test_a_refresh_chunk_by_chunk_writes_every_domain_and_removes_a_deleted_ones(database,
                                                                               monkeypatch):
    monkeypatch.setattr(jobs, "CHUNK_DOMAINS", 2)
    org = make_org()
    names = [f"d{n}.example" for n in range(5)]
    domains = [make_domain(org, name) for name in names]
    report_on(org, "d3.example", TODAY, [{"count": 2}])
    jobs.refresh_org(org.id, NOW)
    for kind in jobs.VARIANT_KINDS:
        stored = {v for (v,) in Snapshot.select(Snapshot.variant)
                  .where(Snapshot.org == org, Snapshot.kind == kind).tuples()}
        assert stored - {""} == set(names)
    assert [e["domain"] for e in blob(org, "compliance")["domain_scores"]] == names
    assert len(blob(org, "overview")["domain_cards"]) == 5
    assert blob(org, "compliance", "d3.example")["total_messages"] == 2
    domains[1].delete_instance()
    later = NOW + timedelta(minutes=10)
    jobs.refresh_org(org.id, later)
    for kind in jobs.VARIANT_KINDS:
        assert snapshots.get(org.id, kind, "d1.example") is None
    kept = [snapshots.get(org.id, kind, name) for kind in jobs.VARIANT_KINDS
            for name in names if name != "d1.example"]
    assert all(b is not None and b.computed_at == later for b in kept)
