"""`rua fetch maildir`: new/ ingested, then marked seen in cur/ as a mail client does."""
from __future__ import annotations

import os

import pytest

from intake.maildir import seen_name
from store.models import Report, TlsReport
from tests.cli.outcome import assert_refused
from tests.intake.conftest import make_maildir, report_mail
from tests.ingest import tlsbuild, xmlbuild


@pytest.fixture
def maildir(tmp_path):
    return make_maildir(tmp_path / "Maildir")


def listing(maildir) -> dict[str, list[str]]:
    return {sub: sorted(os.listdir(maildir / sub)) for sub in ("new", "cur", "tmp")}


@pytest.mark.parametrize("name, flagged, expected", [
    ("1700000000.M1P2.host", False, "1700000000.M1P2.host:2,S"),
    ("1700000000.M1P2.host", True, "1700000000.M1P2.host:2,FS"),
    ("1700000000.M1P2.host:2,RT", False, "1700000000.M1P2.host:2,RST"),
    ("1700000000.M1P2.host:2,S", False, "1700000000.M1P2.host:2,S"),
])
def test_seen_name_adds_the_flags_in_ascii_order(name, flagged, expected):
    assert seen_name(name, flagged) == expected


def test_new_messages_are_ingested_then_marked_seen(rua, acme, maildir):
    (maildir / "new" / "1.a.host").write_bytes(report_mail("r-1"))
    (maildir / "new" / "2.a.host").write_bytes(report_mail("r-2", kind="zip"))
    (maildir / "new" / "3.a.host").write_bytes(xmlbuild.mail({}, body="Hello"))
    (maildir / "cur" / "0.a.host:2,S").write_bytes(report_mail("r-0"))   # read before: left
    result = rua("fetch", "maildir", maildir)
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"stored     {maildir / 'new' / '1.a.host'} (1 report")
    third = maildir / "new" / "3.a.host"
    assert lines[2] == f"refused    {third}: no DMARC or TLS report attachment found"
    assert lines[3].startswith("3 files: 2 reports stored, 0 duplicates, 1 refused")
    assert listing(maildir) == {"new": [], "tmp": [], "cur": [
        "0.a.host:2,S", "1.a.host:2,S", "2.a.host:2,S", "3.a.host:2,FS"]}
    assert sorted(r.report_id for r in Report.select()) == ["r-1", "r-2"]
    again = rua("fetch", "maildir", maildir)
    assert again.exit_code == 0 and again.stdout.startswith("0 files")


def test_all_reads_cur_too_and_dedupe_keeps_one_copy(rua, acme, maildir):
    (maildir / "cur" / "0.a.host:2,S").write_bytes(report_mail("r-0"))
    (maildir / "new" / "1.a.host").write_bytes(report_mail("r-0"))
    result = rua("fetch", "maildir", "--all", "--format", "json", maildir)
    assert result.exit_code == 0, result.stderr
    assert [line.count('"status":"stored"') for line in result.stdout.splitlines()] == [2, 0]
    assert Report.select().count() == 1
    assert listing(maildir)["cur"] == ["0.a.host:2,S", "1.a.host:2,S"]


def test_a_folder_that_is_not_a_maildir_is_one_clear_line(rua, acme, tmp_path):
    assert_refused(rua("fetch", "maildir", tmp_path), "not a Maildir")


def test_tls_reports_and_failure_reports_are_told_apart(rua, acme, maildir):
    gzipped = tlsbuild.gzipped(tlsbuild.report_bytes())
    (maildir / "new" / "1.t.host").write_bytes(tlsbuild.mail(gzipped))
    (maildir / "new" / "2.t.host").write_bytes(tlsbuild.failure_report_mail())
    result = rua("fetch", "maildir", maildir)
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"stored     {maildir / 'new' / '1.t.host'} (1 report")
    assert lines[1].endswith("a DMARC failure (forensic) report, not an aggregate or TLS "
                             "report: rua does not store failure reports")
    assert TlsReport.get().report_id == "tls-1"
