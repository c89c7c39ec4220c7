"""A batch of inputs: one result per file, bad members never costing the good ones."""
import hashlib
import os
import pathlib
from datetime import date

import pytest

from ingest.pipeline import ingest_paths
from ingest.routing import UnknownOrganization
from store.encoding import dumps, loads
from store.models import Record, Report
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild


@pytest.fixture
def org(database):
    org = make_org("Acme")
    make_domain(org, "example.com")
    return org


def write(path, data: bytes):
    path.write_bytes(data)
    return str(path)


def run(paths, config, **kwargs):
    return list(ingest_paths(paths, config=config, **kwargs))


def test_a_plain_report_is_stored_and_described(org, config, tmp_path):
    xml = xmlbuild.report_bytes([xmlbuild.record(count=3), xmlbuild.record(count=4, dkim="fail")],
                                report_id="r-1")
    [result] = run([write(tmp_path / "r.xml", xml)], config)
    assert (result.status, result.error) == ("stored", None)
    [entry] = result.reports
    report = Report.get_by_id(entry["id"])
    assert entry == {"id": report.id, "report_id": "r-1", "org_name": "Example Receiver",
                     "org_id": org.id, "day_begin": date(2023, 11, 14),
                     "day_end": date(2023, 11, 15), "domain": "example.com", "records": 2,
                     "messages": 7, "compliant": 7, "status": "stored"}
    assert report.org_id == org.id


def test_a_resent_file_is_a_duplicate(org, config, tmp_path):
    path = write(tmp_path / "r.xml", xmlbuild.report_bytes())
    assert [r.status for r in run([path, path], config)] == ["stored", "duplicate"]
    assert Report.select().count() == 1


def test_a_zip_with_a_bad_member_keeps_the_good_one_and_is_refused(org, config, tmp_path):
    archive = xmlbuild.zipped({"good.xml": xmlbuild.report_bytes(report_id="good"),
                               "bad.xml": b"<feedback><report_metadata>",
                               "other.xml": xmlbuild.report_bytes(report_id="other")})
    [result] = run([write(tmp_path / "mixed.zip", archive)], config)
    assert result.status == "refused"
    assert "bad.xml" in result.error and "\n" not in result.error
    assert sorted(r["report_id"] for r in result.reports) == ["good", "other"]
    assert Report.select().count() == 2


def test_several_refused_members_are_counted_in_the_error(org, config, tmp_path):
    archive = xmlbuild.zipped({"a.xml": b"<feedback>", "b.xml": b"<feedback>", "c.xml": b"junk"})
    [result] = run([write(tmp_path / "bad.zip", archive)], config)
    assert result.status == "refused" and result.error.endswith("(and 2 more refused)")
    assert len(result.refusals) == 3 and result.reports == []


def test_a_directory_gives_one_result_per_file(org, config, tmp_path):
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    write(folder / "a.xml", xmlbuild.report_bytes(report_id="a"))
    write(folder / "sub" / "b.xml.gz", xmlbuild.gzipped(xmlbuild.report_bytes(report_id="b")))
    write(folder / "c.txt", b"not a report at all")
    results = run([str(folder)], config)
    assert [(r.path.removeprefix(str(folder)), r.status) for r in results] == [
        ("/a.xml", "stored"), ("/c.txt", "refused"), ("/sub/b.xml.gz", "stored")]


def test_an_empty_directory_is_refused_as_holding_no_report(org, config, tmp_path):
    (tmp_path / "empty").mkdir()
    [result] = run([str(tmp_path / "empty")], config)
    assert result.status == "refused" and "no report found" in result.error


def test_an_mbox_is_one_file_with_several_reports(org, config, tmp_path):
    messages = [xmlbuild.mail({f"r{n}.xml.gz": (xmlbuild.gzipped(xmlbuild.report_bytes(report_id=f"m{n}")),
                                                "application/gzip")}) for n in (1, 2)]
    box = b"".join(b"From receiver@example.org Mon Mar  4 00:00:00 2024\n" + m + b"\n"
                   for m in messages)
    [result] = run([write(tmp_path / "box.mbox", box)], config)
    assert result.status == "stored"
    assert [r["report_id"] for r in result.reports] == ["m1", "m2"]


def test_an_unroutable_report_is_refused_naming_its_file(database, config, tmp_path):
    path = write(tmp_path / "r.xml", xmlbuild.report_bytes(domain="nobody.example"))
    [result] = run([path], config)
    assert result.status == "refused"
    assert result.error == f"{path}: unroutable: no organization monitors nobody.example"


def test_org_given_takes_every_report(database, config, tmp_path):
    other = make_org("Other")
    path = write(tmp_path / "r.xml", xmlbuild.report_bytes(domain="nobody.example"))
    [result] = run([path], config, org=other)
    assert result.status == "stored"
    assert Report.get().org_id == other.id


def test_a_record_error_mid_stream_stores_nothing_of_that_report(org, config, tmp_path):
    records = [xmlbuild.record(count=1), xmlbuild.record(count="many")]
    [result] = run([write(tmp_path / "r.xml", xmlbuild.report_bytes(records))], config)
    assert result.status == "refused"
    assert (Report.select().count(), Record.select().count()) == (0, 0)


def test_one_bad_file_never_stops_the_batch(org, config, tmp_path):
    paths = [write(tmp_path / "1.xml", xmlbuild.report_bytes(report_id="1")),
             write(tmp_path / "2.xml", b"\x00\x01garbage"),
             str(tmp_path / "missing.xml"),
             write(tmp_path / "3.xml", xmlbuild.report_bytes(report_id="3"))]
    assert [r.status for r in run(paths, config)] == ["stored", "refused", "refused", "stored"]


def test_inputs_are_never_modified(org, config, tmp_path):
    paths = [write(tmp_path / "a.xml.gz", xmlbuild.gzipped(xmlbuild.report_bytes(report_id="a"))),
             write(tmp_path / "b.xml", b"<feedback>")]
    before = {p: digest(p) for p in paths}
    run(paths, config)
    assert {p: digest(p) for p in paths} == before


def test_progress_hears_of_every_report_and_refusal(org, config, tmp_path):
    archive = xmlbuild.zipped({"good.xml": xmlbuild.report_bytes(report_id="good"),
                               "bad.xml": b"<feedback>"})
    heard = []
    run([write(tmp_path / "m.zip", archive)], config, progress=lambda o, s: heard.append((o, s)))
    assert sorted(status for _, status in heard) == ["refused", "stored"]
    assert all(origin.startswith(str(tmp_path / "m.zip")) for origin, _ in heard)


def digest(path) -> str:
    with open(path, "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def test_an_unknown_org_stops_the_batch_before_any_input_is_read(database, config, tmp_path):
    path = write(tmp_path / "r.xml", xmlbuild.report_bytes())
    with pytest.raises(UnknownOrganization, match="Nobody"):
        run([path], config, org="Nobody")
    assert Report.select().count() == 0


def test_a_file_name_that_is_not_utf8_still_gives_a_json_result(org, config, tmp_path):
    path = os.fsdecode(os.fsencode(str(tmp_path)) + b"/r\xff.xml")
    write(pathlib.Path(path), xmlbuild.report_bytes())
    [result] = run([path], config)
    shown = loads(dumps(result.as_dict()))
    assert result.status == "stored" and shown["path"].endswith("/r\\xff.xml")
