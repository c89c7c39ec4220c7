"""Copies of a report: the duplicate key holds the period, and a copy whose content differs
from the stored report under its key is refused as conflicting, the stored report unchanged."""
from ingest.pipeline import ingest_paths
from store.models import Record, Report
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild as xb

DAY = 86400


def ingest(config, tmp_path, name, xml: bytes):
    path = tmp_path / name
    path.write_bytes(xml)
    [result] = ingest_paths([path], config=config)
    return result


def stored_rows():
    return sorted((r.id, r.report_id, r.date_begin, r.total_messages, r.content_digest)
                  for r in Report.select())


def test_a_report_id_reused_for_another_period_is_stored(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    for number in range(3):         # as Google and Mimecast do, one id for every day
        begin = 1700000000 + number * DAY
        result = ingest(config, tmp_path, f"day{number}.xml", xb.report_bytes(
            org_name="google.com", report_id="same-id", begin=begin, end=begin + DAY - 1))
        assert result.status == "stored", result.error
    assert Report.select().where(Report.report_id == "same-id").count() == 3


def test_a_copy_with_other_content_is_refused_naming_the_stored_report(database, config,
                                                                       tmp_path):
    make_domain(make_org(), "example.com")
    forged = xb.report_bytes(report_id="2026-03-05", records=[xb.record(count=999_999, dkim="fail",
                                                                        spf="fail")])
    first = ingest(config, tmp_path, "forged.xml", forged)
    assert first.status == "stored"
    before, records = stored_rows(), Record.select().count()
    genuine = ingest(config, tmp_path, "genuine.xml", xb.report_bytes(
        report_id="2026-03-05", records=[xb.record(count=12)]))
    [(report_id, *_)] = before
    assert genuine.status == "refused"
    assert genuine.error == (
        f"{tmp_path / 'genuine.xml'}: conflicting copy: report {report_id} (Example Receiver "
        f"report 2026-03-05 for example.com, 2023-11-14 to 2023-11-15) is stored with the same "
        f"reporter, report id, domain and period but other content; the stored report is kept "
        f"unchanged and this copy refused")
    assert (stored_rows(), Record.select().count()) == (before, records)


def test_the_same_content_again_is_a_plain_duplicate(database, config, tmp_path):
    make_domain(make_org(), "example.com")
    xml = xb.report_bytes(report_id="r-7")
    assert ingest(config, tmp_path, "a.xml", xml).status == "stored"
    again = ingest(config, tmp_path, "b.xml.gz", xb.gzipped(xml))     # another wrapping
    assert (again.status, again.error, len(stored_rows())) == ("duplicate", None, 1)
