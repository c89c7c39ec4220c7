"""One body a request computes (refresh_one) is stored under its organization's lock, as every
refresh's blobs are: while another writer holds it, the request answers with the body stored,
or with one it stores nowhere, so a body read from older facts never replaces a newer one."""
from __future__ import annotations

import threading
from datetime import timedelta

from snapshotter import jobs
from snapshotter.jobs import refresh_one
from store import snapshots
from store.models import ScoreHistory
from tests.factories import make_org
from tests.held_lock import held_elsewhere
from tests.snapshotter.reports import NOW, TODAY, report_on


def org_with_a_report():
    org = make_org()
    report_on(org, "example.com", TODAY, [{"count": 3}])
    return org


def test_while_another_writer_holds_the_organization_the_stored_body_is_the_answer(
        database, config):
    org = org_with_a_report()
    stored = refresh_one(org.id, "overview", "", NOW, config)
    assert snapshots.get(org.id, "overview") == stored
    report_on(org, "example.com", TODAY, [{"count": 5}])       # the writer's newer facts
    with held_elsewhere(config, f"snapshots.{org.id}"):
        answer = refresh_one(org.id, "overview", "", NOW + timedelta(minutes=10), config,
                             stored)
    assert answer == stored and snapshots.get(org.id, "overview") == stored


def test_with_nothing_stored_the_answer_is_computed_and_stored_by_nobody(database, config):
    org = org_with_a_report()
    with held_elsewhere(config, f"snapshots.{org.id}"):
        trends = refresh_one(org.id, "trends", "example.com", NOW, config)
        history = refresh_one(org.id, "history", "", NOW, config)
    assert snapshots.get(org.id, "trends", "example.com") is None
    assert snapshots.get(org.id, "history") is None and ScoreHistory.select().count() == 0
    # Once the lock is free, the same facts give the same bodies, stored this time.
    assert refresh_one(org.id, "trends", "example.com", NOW, config) == trends
    assert refresh_one(org.id, "history", "", NOW, config) == history
    assert snapshots.get(org.id, "history") == history and ScoreHistory.select().count() == 1


def test_a_request_waits_for_a_writer_that_lets_go_and_stores_its_body(database, config,
                                                                       monkeypatch):
    monkeypatch.setattr(jobs, "ONE_WAIT_SECONDS", 60)           # no chance in the wait
    org = org_with_a_report()
    with held_elsewhere(config, f"snapshots.{org.id}") as writer:
        threading.Timer(0.3, writer.stdin.close).start()        # the writer is done soon
        answer = refresh_one(org.id, "overview", "", NOW, config)
    assert snapshots.get(org.id, "overview") == answer
