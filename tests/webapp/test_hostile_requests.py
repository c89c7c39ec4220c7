"""What a stranger's reports cannot make a request do: rebuild the organization (a stale or
missing body is computed alone), or hold a large report's detail in memory (it is streamed)."""
import gc
import tracemalloc
from datetime import timedelta

import orjson

from store import db, is_postgres, report_queries, snapshots
from store.encoding import dumps
from store.models import Domain, Organization, Snapshot
from snapshotter import jobs
from tests.factories import make_domain, make_report
from tests.snapshotter.reports import NOW, TODAY, report_on
from tests.servers import http_get, quiet_gunicorn
from tests.webapp.helpers import detail_at_once, get

LATER = NOW + timedelta(hours=2)      # past every kind's tolerance


def stamps(org) -> dict:
    return {(k, v): at for k, v, at in Snapshot.select(Snapshot.kind, Snapshot.variant,
                                                       Snapshot.computed_at)
            .where(Snapshot.org == org.id).tuples()}


def a_busy_org(org, clock, domains=30):
    """An organization refreshed at NOW, then a report on each of `domains` subdomains."""
    clock.now = NOW
    report_on(org, "example.com", TODAY, [{"count": 5}])
    jobs.refresh_org(org.id, NOW)
    for n in range(domains):
        report_on(org, f"s{n}.example.com", TODAY, [{"count": 1}])
    Organization.update(dirty_since=NOW + timedelta(minutes=1)).where(
        Organization.id == org.id).execute()
    clock.now = LATER
    return stamps(org)


def changed(before: dict, after: dict) -> set:
    return {key for key, at in after.items() if before.get(key) != at}


def test_a_stale_health_is_computed_alone(client, org, key, clock):
    before = a_busy_org(org, clock)
    body = get(client, "/domains/example.com/health", key).get_json()
    assert body["computed_at"] == "2026-03-31T14:00:00Z" and body["total_messages"] == 5
    assert changed(before, stamps(org)) == {("health", "example.com")}
    # The organization is still the snapshotter's to refresh.
    assert Organization.get_by_id(org.id).dirty_since is not None


def test_a_new_domains_health_is_computed_alone_among_many_auto_domains(client, org, key, clock):
    before = a_busy_org(org, clock)
    Domain.update(source="auto").where(Domain.name == "s7.example.com").execute()
    make_domain(org, "new.example")
    body = get(client, "/domains/new.example/health", key).get_json()
    assert body["domain"] == "new.example" and body["grade"] == "N/A"
    assert changed(before, stamps(org)) == {("health", "new.example")}
    body = get(client, "/domains/s7.example.com/health", key).get_json()
    assert body["total_messages"] == 1


def test_a_stale_overview_is_computed_alone_from_the_per_domain_facts(client, org, key, clock):
    before = a_busy_org(org, clock)
    body = get(client, "/dashboard/overview", key).get_json()
    assert body["org_health"]["total_messages"] == 35 and len(body["domain_cards"]) == 31
    # The overview, and the day totals it summed (kept for the next refresh), nothing else.
    assert changed(before, stamps(org)) == {("overview", ""), ("day_totals", "")}
    assert snapshots.get(org.id, "health", "s3.example.com") is None


def test_domain_variants_are_computed_alone(client, org, key, clock):
    before = a_busy_org(org, clock)
    score = get(client, "/compliance-score?domain=s3.example.com", key).get_json()
    assert score["total_messages"] == 1
    trend = get(client, "/trends?domain=s3.example.com&days=1", key).get_json()
    assert trend["points"][-1]["total_messages"] == 1
    assert changed(before, stamps(org)) == {("compliance", "s3.example.com"),
                                            ("trends", "s3.example.com")}


def test_the_body_computed_alone_is_the_one_the_snapshotter_makes(client, org, key, clock):
    a_busy_org(org, clock)
    paths = {("health", "example.com"): "/domains/example.com/health",
             ("overview", ""): "/dashboard/overview",
             ("compliance", "s3.example.com"): "/compliance-score?domain=s3.example.com",
             ("compliance", ""): "/compliance-score"}
    alone = {k: get(client, p, key).get_data() for k, p in paths.items()}
    jobs.refresh_org(org.id, LATER)
    assert alone == {k: snapshots.get(org.id, *k).body for k in paths}


def a_report_of(org, count: int):
    """A report of `count` records from as many senders, some failing, with reasons."""
    return make_report(org, "example.com", [
        {"source_ip": f"198.18.{n // 256}.{n % 256}", "count": n + 1,
         "dkim": "fail" if n % 3 else "pass", "reasons": [{"Type": "local_policy",
                                                           "Comment": f"rule {n}"}]}
        for n in range(count)])


def streamed(client, key, report) -> tuple[int, int, int]:
    """(body bytes, largest piece, peak of Python memory) while the detail is read as sent,
    each piece dropped once counted. Collected first, so the cyclic collector's next pass falls
    at the same point of every measurement."""
    gc.collect()
    tracemalloc.start()
    try:
        resp = get(client, f"/reports/{report.id}", key)
        assert resp.status_code == 200 and resp.is_streamed
        total = largest = 0
        for chunk in resp.response:
            total, largest = total + len(chunk), max(largest, len(chunk))
        return total, largest, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_report_of_one_page_is_answered_whole_with_its_length(client, org, key):
    report = a_report_of(org, 5)
    resp = get(client, f"/reports/{report.id}", key)
    assert resp.status_code == 200
    assert int(resp.headers["Content-Length"]) == len(resp.get_data())     # not chunked
    assert len(orjson.loads(resp.get_data())["record_evidence"]) == 5


def test_a_large_report_detail_is_streamed_a_page_at_a_time(client, org, key, monkeypatch):
    monkeypatch.setattr(report_queries, "RECORDS_PAGE", 100)
    monkeypatch.setattr(report_queries.RecordPages.__init__, "__defaults__", (100,))
    small, report = a_report_of(org, 500), a_report_of(org, 4000)
    if is_postgres():
        # Postgres plans a page's join by the statistics autovacuum would take after such a
        # load; without them (a test server may run without it) it reads every sender of the
        # organization for each record, and the test takes minutes instead of seconds.
        db.execute_sql('ANALYZE "record", "source"')
    # Both read once before measuring: first uses (statements, caches) are paid by neither.
    streamed(client, key, report)
    streamed(client, key, small)
    small_size, _, peak_of_small = streamed(client, key, small)
    size, largest, peak = streamed(client, key, report)
    # No piece holds more than a page. Memory does not grow with the report: 7/8 of its body
    # more than the small one's would be in memory at once if it were built whole; the peaks'
    # difference is compared, so what earlier tests left in this process moves neither.
    assert largest < size / 20, (largest, size)
    assert peak - peak_of_small < (size - small_size) / 4, (peak, peak_of_small, size, small_size)
    body = get(client, f"/reports/{report.id}", key).get_data()
    whole = detail_at_once(org.id, report.id)
    assert len(body) == size and orjson.loads(body) == orjson.loads(dumps(whole))
    assert len(orjson.loads(body)["Records"]) == 4000


def test_a_small_report_detail_is_one_piece_per_field_and_the_same_bytes(client, org, key):
    report = a_report_of(org, 3)
    body = get(client, f"/reports/{report.id}", key).get_data()
    whole = detail_at_once(org.id, report.id)
    assert body == dumps(whole)


def test_a_head_of_a_report_detail_sends_no_body_and_leaves_the_store_usable(client, org, key):
    report = a_report_of(org, 3)
    resp = client.head(f"/api/v1/reports/{report.id}", headers={"Authorization": f"Bearer {key}"})
    assert resp.status_code == 200 and resp.get_data() == b""
    assert get(client, f"/reports/{report.id}", key).status_code == 200


def test_under_gunicorn_a_detail_of_several_pages_is_whole_and_the_worker_serves_on(
        config, database, org, key, tmp_path):
    report = a_report_of(org, 2 * report_queries.RECORDS_PAGE + 5)
    with quiet_gunicorn(config, tmp_path, workers=1) as base:
        for _ in range(3):     # one worker: its connection went back after each stream
            status, headers, body = http_get(f"{base}/reports/{report.id}", key, timeout=60)
            assert status == 200 and headers.get("Transfer-Encoding") == "chunked"
            assert len(orjson.loads(body)["record_evidence"]) == 2 * report_queries.RECORDS_PAGE + 5
        assert http_get(f"{base}/reports", key)[0] == 200
