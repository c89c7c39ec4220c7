"""Migration 18 upgrades a store in place: reports, TLS reports and kept copies stored before it
say their mail is unchecked, and why; reports arriving after it keep what their mail proves."""
from ingest.pipeline import ingest_paths
from store import migrations
from store.models import Report, ReportCopy, SchemaVersion, TlsReport
from tests.factories import make_domain, make_org, make_tls_report
from tests.ingest import xmlbuild as xb

COLUMNS = ("authenticity", "signed_by", "authenticity_reason")


def _as_before(database):
    """The store as version 16 left it: no column says what a report's mail proves."""
    for table in ("report", "tls_report", "report_copy"):
        for column in COLUMNS:
            database.execute_sql(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')


def test_every_old_report_is_unchecked(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    for number in range(2):         # one stored, one conflicting copy kept aside
        (tmp_path / f"r{number}.xml").write_bytes(xb.report_bytes([xb.record(count=number + 1)]))
    list(ingest_paths([tmp_path / "r0.xml", tmp_path / "r1.xml"], config=config))
    make_tls_report(Report.get().org_id)
    _as_before(database)
    SchemaVersion.delete().where(SchemaVersion.version == 18).execute()
    assert dict(migrations.migrate(database)) == {
        18: "reports and kept copies say what their mail proves of their origin (DKIM)"}
    for model in (Report, TlsReport, ReportCopy):
        [row] = model.select()
        assert (row.authenticity, row.signed_by, row.authenticity_reason) == (
            "unchecked", "", "stored before rua checked signatures")


def test_it_runs_again_without_harm(database):
    with database.atomic():
        migrations._authenticity(database)
    assert set(COLUMNS) <= {c.name for c in database.get_columns("report_copy")}
