"""After a prune every figure the API shows is the same; a pruned report says its records went."""
from __future__ import annotations

import json
import pathlib
from datetime import timedelta

from snapshotter import jobs
from store import retention
from store.models import Report
from tests.snapshotter.reports import NOW, mixed_org
from tests.webapp.helpers import get

DOC = json.loads((pathlib.Path(__file__).parents[2] / "webapp" / "openapi.json").read_text())


def every_answer(client, key, report_ids, clock) -> dict:
    """Each documented GET of the organization (usage moves with each request, so not it), a
    few seconds apart as a client would send them (the abuse limit counts per second)."""
    seen = {}
    for path in sorted(DOC["paths"]):
        if "usage" in path or "{ip}" in path:
            continue
        ids = report_ids if "{id}" in path else [None]
        for report_id in ids:
            concrete = path.replace("{domain}", "example.com").replace("{id}", str(report_id))
            clock.now += timedelta(seconds=2)
            response = get(client, concrete, key)
            seen[concrete] = (response.status_code, json.loads(response.data)
                              if response.mimetype == "application/json" else response.data)
    return seen


def test_every_figure_is_the_same_after_a_prune_and_pruned_details_say_so(client, key, org,
                                                                          clock):
    clock.now = NOW
    mixed_org(org, days_back=60)
    jobs.refresh_org(org.id, NOW)
    ids = [r.id for r in Report.select(Report.id).order_by(Report.date_end)]
    before = every_answer(client, key, ids, clock)

    done = retention.prune(NOW, 30)
    jobs.refresh_org(org.id, NOW)
    after = every_answer(client, key, ids, clock)

    assert done.reports > 0 and done.kept > 0
    pruned = {f"/reports/{r.id}" for r in Report.select().where(
        Report.records_pruned_at.is_null(False))}
    assert len(pruned) == done.reports
    for path in before:
        if path not in pruned:
            assert after[path] == before[path], path
            continue
        status, detail = after[path]
        assert status == 200
        assert detail["records_pruned_at"] == "2026-03-31T12:00:00Z"
        assert detail["Records"] == detail["record_classifications"] == []
        assert detail["record_evidence"] == detail["record_alignment"] == []
        summary = {k: v for k, v in before[path][1].items()
                   if not k.startswith(("Records", "record_")) and k != "records_pruned_at"}
        assert {k: detail[k] for k in summary} == summary


def test_the_source_ip_filter_finds_pruned_reports_as_before(client, key, org, clock):
    clock.now = NOW
    mixed_org(org, days_back=60)
    addresses = ("192.0.2.1", "198.51.100.7", "2001:db8::1", "203.0.113.9")

    def reports_holding(ip: str) -> dict:
        clock.now += timedelta(seconds=2)
        return get(client, f"/reports?source_ip={ip}&limit=200", key).json

    before = {ip: reports_holding(ip) for ip in addresses}
    done = retention.prune(NOW, 30)
    after = {ip: reports_holding(ip) for ip in addresses}

    assert done.reports > 0
    assert after == before
    assert before["192.0.2.1"]["total"] > done.reports     # pruned and kept reports both found
    assert before["203.0.113.9"]["total"] == 0             # an address no report holds: none
