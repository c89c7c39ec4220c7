"""`rua fetch imap --watch` through a Postgres restart: the mail that came while the store was
down is stored once it answers, by the same process."""
from __future__ import annotations

import pytest

from config import Config
from store import open_db
from store.models import Report
from tests import postgres_cluster
from tests.factories import make_domain, make_org
from tests.intake.conftest import report_mail, watching


@pytest.fixture(scope="module")
def cluster():
    yield from postgres_cluster.for_test()


def stored_ids(url: str) -> list[str]:
    database = open_db(url)
    with database.connection_context():
        ids = sorted(r.report_id for r in Report.select(Report.report_id))
    database.close_all()
    return ids


def test_the_watcher_stores_what_came_while_the_store_was_down_without_a_restart(
        cluster, box, imap_server, tmp_path):
    url = cluster.url("rua")
    database = open_db(url)
    with database.connection_context():
        make_domain(make_org("Acme"), "example.com")
    database.close_all()
    config = Config(database_url=url, offline=True, lock_dir=str(tmp_path))
    with watching(config, box.settings) as (out, err):
        assert imap_server.wait_for_idle(), (out.lines, err.lines)
        box.append(report_mail("before"))
        assert out.wait_for("1 file: 1 report stored"), (out.lines, err.lines)
        cluster.stop("fast")
        box.append(report_mail("while-down"))
        assert err.wait_for("the store does not answer"), (out.lines, err.lines)
        cluster.start()
        assert out.wait_for("1 file: 1 report stored", count=2), (out.lines, err.lines)
    assert stored_ids(url) == ["before", "while-down"]
    assert box.subjects(box.done) == ["Report before", "Report while-down"]
