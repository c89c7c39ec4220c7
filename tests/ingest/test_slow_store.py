"""Ingest under a slow Postgres (another session holding the report table against writes, as
the soak's fault does): the report waits and is stored once, and reads go on meanwhile."""
from __future__ import annotations

import threading

import psycopg2
import pytest

from ingest.pipeline import ingest_paths
from store import db
from store.models import Report
from tests.conftest import POSTGRES_URL
from tests.factories import make_domain, make_key, make_org
from tests.ingest import xmlbuild
from webapp import create_app

pytestmark = pytest.mark.skipif(not POSTGRES_URL, reason="a table lock of Postgres")


def test_a_report_met_by_a_held_table_is_stored_once_it_is_let_go_and_reads_go_on(
        database, config, tmp_path):
    org = make_org(plan="team")
    make_domain(org, "example.com")
    _, key = make_key(org)
    path = tmp_path / "report.xml"
    path.write_bytes(xmlbuild.report_bytes([xmlbuild.record(count=7)], report_id="slow-1"))
    app = create_app(config)          # its own pool; each request takes a connection of it
    holder = psycopg2.connect(POSTGRES_URL)
    with holder.cursor() as cursor:
        cursor.execute('LOCK TABLE "report" IN SHARE ROW EXCLUSIVE MODE')
    results = []

    def ingest():
        with db.connection_context():
            results.extend(ingest_paths([str(path)], config=config))
    writer = threading.Thread(target=ingest)
    writer.start()
    try:
        answer = app.test_client().get("/api/v1/reports",
                                       headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200 and answer.json["total"] == 0
    finally:
        holder.rollback()
        holder.close()
    writer.join(timeout=60)
    assert [r.status for r in results] == ["stored"]
    with db.connection_context():
        assert [(r.report_id, r.total_messages) for r in Report.select()] == [("slow-1", 7)]
