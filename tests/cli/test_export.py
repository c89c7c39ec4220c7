"""`rua export`: a period's records as CSV or JSON lines, pruned reports said to be gone."""
from __future__ import annotations

import csv
import io
import json
import os
from datetime import date

import pytest

from store import exports
from store.clock import utcnow
from store.models import Report
from tests.factories import epoch, make_domain, make_report

JAN = {"date_begin": epoch("2024-01-05T00:00:00"), "date_end": epoch("2024-01-06T00:00:00")}
FEB = {"date_begin": epoch("2024-02-05T00:00:00"), "date_end": epoch("2024-02-06T00:00:00")}


@pytest.fixture
def stored(acme):
    """Two January reports (example.com with a hostile header_from, and example.org) and one
    February report."""
    make_domain(acme, "example.org")
    make_report(acme, "example.com", [{"source_ip": "192.0.2.7", "count": 40},
                                      {"header_from": "=HYPERLINK(\"http://x\")", "dkim": "fail",
                                       "spf": "fail"}], report_id="jan-com", **JAN)
    make_report(acme, "example.org", [{"source_ip": "198.51.100.9", "count": 3}],
                report_id="jan-org", **JAN)
    make_report(acme, "example.com", None, report_id="feb-com", **FEB)
    return acme


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_has_every_record_of_the_period_with_formulas_neutralized(rua, stored):
    result = rua("export", "Acme", "--from", "2024-01-01", "--to", "2024-01-31")
    assert result.exit_code == 0, result.stderr
    rows = _csv(result.stdout)
    assert [(r["reporter_report_id"], r["domain"], r["source_ip"]) for r in rows] == [
        ("jan-com", "example.com", "192.0.2.7"), ("jan-com", "example.com", "192.0.2.1"),
        ("jan-org", "example.org", "198.51.100.9")]
    assert rows[0]["count"] == "40" and rows[0]["day_begin"] == "2024-01-05"
    assert rows[1]["header_from"] == "'=HYPERLINK(\"http://x\")"
    assert json.loads(rows[0]["auth_dkim"])[0]["Selector"] == "s1"
    assert "rua export: 3 records of Acme from 2024-01-01 to 2024-01-31" in result.stderr


def test_jsonl_to_a_file_for_one_domain(rua, stored, tmp_path):
    out = tmp_path / "export.jsonl"
    result = rua("export", "Acme", "--domain", "EXAMPLE.org", "--from", "2024-01-01",
                 "--to", "2024-12-31", "--format", "jsonl", "--output", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    [line] = out.read_text().splitlines()
    record = json.loads(line)
    assert record["domain"] == "example.org" and record["count"] == 3
    assert record["header_from"] == "example.org"     # JSON lines are left as they are
    assert record["auth_spf"][0]["Scope"] == "mfrom"


def test_records_are_read_in_pages(stored):
    period = exports.Period(stored.id, date(2024, 1, 1), date(2024, 12, 31))
    assert len(list(exports.records(period, size=1))) == 4
    assert len(list(exports.records(period, size=2))) == 4


def test_a_pruned_period_says_its_records_are_gone(rua, stored):
    Report.update(records_pruned_at=utcnow()).where(Report.report_id == "jan-org").execute()
    from store.models import Record
    Record.delete().where(Record.report.in_(
        Report.select(Report.id).where(Report.report_id == "jan-org"))).execute()
    result = rua("export", "Acme", "--from", "2024-01-01", "--to", "2024-01-31")
    assert result.exit_code == 0, result.stderr
    assert len(_csv(result.stdout)) == 2
    assert ("1 report of the period (2024-01-05 to 2024-01-05) had their records deleted by "
            "retention (records_pruned_at)") in result.stderr


@pytest.mark.parametrize("args, reason", [
    (("--from", "2024-02-01", "--to", "2024-01-01"), "--from 2024-02-01 is after --to 2024-01-01"),
    (("--from", "2024-13-01", "--to", "2024-01-01"), "'2024-13-01' is not a date"),
    (("--from", "2024-01-01", "--to", "2024-01-31", "--format", "xml"), "unknown format 'xml'"),
    (("--from", "2024-01-01", "--to", "2024-01-31", "--domain", "a..b"), "--domain: "),
])
def test_bad_arguments_are_one_line_usage_errors(rua, stored, args, reason):
    result = rua("export", "Acme", *args)
    assert result.exit_code == 2
    assert reason in result.stderr and len(result.stderr.splitlines()) == 1


def test_an_unknown_organization_is_named(rua, stored):
    result = rua("export", "Nobody", "--from", "2024-01-01", "--to", "2024-01-31")
    assert result.exit_code == 2 and "no organization 'Nobody'" in result.stderr


def test_an_output_that_cannot_be_written_is_one_line(rua, stored, tmp_path):
    result = rua("export", "Acme", "--from", "2024-01-01", "--to", "2024-01-31",
                 "--output", tmp_path / "missing" / "export.csv")
    assert result.exit_code == 2
    assert "--output " in result.stderr and "No such file or directory" in result.stderr


def test_a_reader_that_goes_away_ends_the_export_quietly(config, stored, tmp_path):
    """`rua export … | head -n 2` as a shell runs it: no traceback, whatever is left unread."""
    import subprocess
    import sys
    env = {"RUA_DATABASE_URL": config.database_url, "RUA_LOCK_DIR": config.lock_dir,
           "PATH": os.environ["PATH"]}
    for n in range(3):      # enough rows that the pipe closes while rua still writes
        make_report(stored, "example.com", [{"source_ip": f"198.51.100.{i}"} for i in range(2000)],
                    report_id=f"big-{n}", **JAN)
    run = subprocess.run(
        f"{sys.executable} -c 'from cli import main; main()' export Acme --from 2024-01-01 "
        f"--to 2024-01-31 | head -n 2", shell=True, env=env, capture_output=True, text=True,
        timeout=120)
    assert run.stdout.splitlines()[0].startswith("report,reporter,")
    assert "Traceback" not in run.stderr and "Error" not in run.stderr, run.stderr
