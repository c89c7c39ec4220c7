"""rua prune: what retention deletes, said before (--dry-run) and after."""
from __future__ import annotations

from datetime import timedelta

import pytest

from store.clock import utcnow
from store.models import Record
from tests.cli.outcome import assert_refused
from tests.factories import make_org
from tests.snapshotter.reports import report_on


@pytest.fixture
def acme(database):
    org = make_org("Acme")
    today = utcnow().date()         # the command prunes against the real clock
    for back in (1, 40, 70):
        report_on(org, "example.com", today - timedelta(days=back), [{"count": 2}, {"count": 1}])
    return org


def test_without_a_retention_nothing_is_deleted(rua, acme):
    result = rua("prune")
    assert (result.exit_code, result.output) == (
        0, "retention is off (RUA_RETENTION_DAYS=0): every record is kept\n")
    assert Record.select().count() == 6


def test_a_dry_run_says_what_would_go_and_deletes_nothing(rua, acme):
    result = rua("prune", "--days", "30", "--dry-run")
    cutoff = (utcnow() - timedelta(days=30)).date().isoformat()
    assert result.exit_code == 0
    assert result.output == (f"would delete 4 records of 2 reports whose period ended before "
                             f"{cutoff}; 2 records kept\n")
    assert Record.select().count() == 6


def test_a_negative_retention_is_refused_before_anything_is_planned(rua, acme, monkeypatch):
    monkeypatch.setenv("RUA_RETENTION_DAYS", "-5")
    assert_refused(rua("prune", "--dry-run"), "RUA_RETENTION_DAYS=-5 must be 0 or more")
    assert Record.select().count() == 6


def test_prune_deletes_and_says_what_it_kept(rua, acme):
    result = rua("prune", "--days", "30")
    assert result.exit_code == 0
    assert result.output.startswith("deleted 4 records of 2 reports whose period ended before ")
    assert "; 2 records kept\n" in result.output
    assert Record.select().count() == 2


def test_help_explains_what_is_kept(rua):
    result = rua("prune", "--help")
    assert "Daily rollups, snapshots, score history, report summaries and events are kept" in \
        " ".join(result.output.split())
