"""Migration 10 upgrades a store in place: reports' duplicate keys gain the period, reports
get an (unknown) content digest, and the table of messages being read appears."""
import hashlib

from ingest.pipeline import ingest_paths
from store import migrations
from store.models import IntakeAttempt, Report, SchemaVersion
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild as xb


def old_key(org_name: str, report_id: str, domain: str) -> str:
    """Version 9's key: reporter, report id and domain, without the period."""
    text = "\x00".join((org_name, report_id, domain))
    return hashlib.sha256(text.encode()).hexdigest()


def test_an_old_store_is_upgraded_in_place(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    xml = xb.report_bytes(report_id="old-1")
    (tmp_path / "old.xml").write_bytes(xml)
    [first] = ingest_paths([tmp_path / "old.xml"], config=config)
    assert first.status == "stored"
    # The store as version 9 left it.
    Report.update(dedupe_key=old_key("Example Receiver", "old-1", "example.com")).execute()
    database.execute_sql('ALTER TABLE "report" DROP COLUMN content_digest')
    database.drop_tables([IntakeAttempt])
    steps = {step: version for version, _, step in migrations.MIGRATIONS}
    assert steps[migrations._keys_with_the_period] == 10
    with database.atomic():
        migrations._keys_with_the_period(database)
    assert "intake_attempt" in database.get_tables()
    [row] = Report.select()
    assert row.content_digest == ""
    # The same report again is still a duplicate; another period of its id is stored.
    (tmp_path / "again.xml").write_bytes(xml)
    (tmp_path / "next.xml").write_bytes(xb.report_bytes(report_id="old-1", begin=1700086400,
                                                        end=1700172799))
    again, following = ingest_paths([tmp_path / "again.xml", tmp_path / "next.xml"],
                                    config=config)
    assert (again.status, following.status) == ("duplicate", "stored")


def test_it_runs_on_a_store_that_has_higher_versions_already(database):
    """Branches merged out of order: a store made at version 13 lacks 10 and still gets it."""
    SchemaVersion.delete().where(SchemaVersion.version == 10).execute()
    database.execute_sql('ALTER TABLE "report" DROP COLUMN content_digest')
    assert 10 in dict(migrations.migrate(database))
    assert "content_digest" in {c.name for c in database.get_columns("report")}
