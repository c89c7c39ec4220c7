"""`rua ingest` through click's runner against the real test database."""
from __future__ import annotations

import json
import os
import pathlib
import pty
import select
import subprocess
import sys

import pytest

from cli import ingest_display
from store.models import Report, TlsReport
from tests.factories import make_domain, make_org
from tests.ingest import tlsbuild, xmlbuild


@pytest.fixture
def acme(database):
    org = make_org("Acme")
    make_domain(org, "example.com")
    return org


@pytest.fixture
def inputs(tmp_path):
    """Write named report files into tmp_path: {"a.xml": bytes} -> [paths]."""
    def write(files: dict[str, bytes]) -> list[str]:
        paths = []
        for name, data in files.items():
            (tmp_path / name).write_bytes(data)
            paths.append(str(tmp_path / name))
        return paths
    return write


def good(report_id="r-1", count=5, **kwargs) -> bytes:
    return xmlbuild.report_bytes([xmlbuild.record(count=count)], report_id=report_id, **kwargs)


def test_help_names_every_option(rua):
    result = rua("ingest", "--help")
    assert result.exit_code == 0
    for word in ("--org", "--format", "PATH...", "Exit status"):
        assert word in result.stdout


def test_text_output_has_a_line_per_file_and_a_summary(rua, acme, inputs):
    paths = inputs({"a.xml": good("a", 5), "b.xml.gz": xmlbuild.gzipped(good("b", 7))})
    result = rua("ingest", *paths)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("stored") and paths[0] in lines[0] and "5 messages" in lines[0]
    assert lines[1].startswith("stored") and paths[1] in lines[1] and "7 messages" in lines[1]
    assert lines[2].startswith("2 files: 2 reports stored, 0 duplicates, 0 refused; "
                               "2 records, 12 messages in ")
    assert lines[2].endswith(" s")
    assert lines[3].startswith("reports cover 2023-11-14 to 2023-11-15") and len(lines) == 4


def test_json_output_is_one_object_per_file_and_the_summary_goes_to_stderr(rua, acme, inputs):
    paths = inputs({"a.xml": good("a", 5), "bad.xml": b"<feedback>"})
    result = rua("ingest", "--format", "json", *paths)
    assert result.exit_code == 1
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    report = Report.get()
    assert first == {"path": paths[0], "status": "stored", "error": None, "reports": [
        {"id": report.id, "report_id": "a", "org_name": "Example Receiver",
         "org_id": acme.id, "day_begin": "2023-11-14", "day_end": "2023-11-15",
         "domain": "example.com", "records": 1, "messages": 5, "compliant": 5,
         "status": "stored"}]}
    assert second["path"] == paths[1] and second["status"] == "refused"
    assert second["error"].startswith(paths[1]) and second["reports"] == []
    assert "2 files: 1 report stored, 0 duplicates, 1 refused" in result.stderr


def test_a_resent_report_is_reported_as_a_duplicate_and_exits_0(rua, acme, inputs):
    [path] = inputs({"a.xml": good("a")})
    assert rua("ingest", path).exit_code == 0
    result = rua("ingest", path)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"duplicate  {path} (1 report already stored)")
    assert "0 reports stored, 1 duplicate, 0 refused" in result.stdout
    assert Report.select().count() == 1


def test_a_batch_with_one_bad_file_stores_the_good_ones_and_exits_1(rua, acme, inputs):
    paths = inputs({"1.xml": good("1"), "2.xml": b"\x00junk", "3.zip": xmlbuild.zipped(
        {"ok.xml": good("3"), "broken.xml": b"<feedback><report_metadata>"})})
    result = rua("ingest", *paths)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("stored")
    assert lines[1].startswith(f"refused    {paths[1]}: ")
    assert lines[2].startswith(f"refused    {paths[2]} » broken.xml: ")
    assert lines[2].endswith("[1 report from it stored]")
    assert "3 files: 2 reports stored, 0 duplicates, 2 refused" in lines[3]
    assert sorted(r.report_id for r in Report.select()) == ["1", "3"]


def test_an_unroutable_report_is_refused_and_org_routes_it(rua, acme, inputs):
    other = make_org("Other")
    [path] = inputs({"a.xml": good("a", domain="elsewhere.example")})
    refused = rua("ingest", path)
    assert refused.exit_code == 1
    assert "unroutable: no organization monitors elsewhere.example" in refused.stdout
    stored = rua("ingest", "--org", "Other", path)
    assert stored.exit_code == 0, stored.stdout
    assert Report.get().org_id == other.id


def test_stdin_is_read_for_a_dash(rua, acme):
    result = rua("ingest", "-", stdin=xmlbuild.gzipped(good("piped", 9)))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.startswith("stored     - (1 report, 1 record, 9 messages)")
    assert Report.get().report_id == "piped"


@pytest.mark.parametrize("args, fragment", [
    (["--org", "Nobody", "{path}"], "no organization 'Nobody'"),
    (["{missing}"], "no such file or directory"),
    (["--format", "yaml", "{path}"], "unknown format 'yaml'"),
])
def test_usage_errors_exit_2_with_one_line_and_store_nothing(rua, acme, inputs, tmp_path,
                                                             args, fragment):
    [path] = inputs({"a.xml": good()})
    args = [a.format(path=path, missing=tmp_path / "missing.xml") for a in args]
    result = rua("ingest", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("rua: error: ") and fragment in result.stderr
    assert result.stdout == "" and Report.select().count() == 0


def test_no_path_is_a_usage_error(rua):
    assert rua("ingest").exit_code == 2


def test_long_batches_print_progress_lines_on_stderr_without_a_terminal(rua, acme, inputs,
                                                                       monkeypatch):
    monkeypatch.setattr(ingest_display, "PROGRESS_EVERY", 0.0)
    paths = inputs({"a.xml": good("a"), "b.xml": good("b")})
    result = rua("ingest", "--format", "json", *paths)
    progress = [l for l in result.stderr.splitlines() if l.startswith("rua ingest: ")]
    assert len(progress) == 2 and "reports read" in progress[-1]
    assert all(line.startswith("{") for line in result.stdout.splitlines())


def test_a_short_batch_prints_no_progress_lines(rua, acme, inputs):
    result = rua("ingest", *inputs({"a.xml": good("a")}))
    assert "rua ingest: " not in result.stderr


def test_a_reader_that_goes_away_does_not_stop_the_batch(acme, inputs, config):
    """`rua ingest … | head -1`: writes to the closed pipe fail, the batch still completes."""
    paths = inputs({f"{n}.xml": good(f"r{n}") for n in range(3)})
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run([str(pathlib.Path(sys.executable).with_name("rua")), "ingest", *paths],
                              stdout=writer, stderr=subprocess.PIPE, timeout=60,
                              env={**os.environ, "RUA_DATABASE_URL": config.database_url})
    finally:
        os.close(writer)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert sorted(r.report_id for r in Report.select()) == ["r0", "r1", "r2"]


def run_on_terminal(args, config) -> tuple[int, bytes]:
    """Run `rua ARGS…` with stdin and stderr on a pseudo-terminal; (exit status, terminal bytes)."""
    main_fd, terminal = pty.openpty()
    try:
        done = subprocess.run([str(pathlib.Path(sys.executable).with_name("rua")), *args],
                              stdin=terminal, stderr=terminal, stdout=subprocess.DEVNULL,
                              timeout=60, env={**os.environ, "RUA_DATABASE_URL": config.database_url})
        os.close(terminal)
        terminal = None
        seen = b""
        while select.select([main_fd], [], [], 0.5)[0]:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:      # the terminal's other end is closed: all was read
                break
            if not chunk:
                break
            seen += chunk
        return done.returncode, seen
    finally:
        os.close(main_fd)
        if terminal is not None:
            os.close(terminal)


def test_a_terminal_gets_a_progress_bar_on_stderr(acme, inputs, config):
    paths = inputs({f"{n}.xml": good(f"t{n}") for n in range(3)})
    status, seen = run_on_terminal(["ingest", *paths], config)
    assert status == 0, seen
    assert b"ingesting" in seen and b"3/3" in seen


def test_a_dash_with_a_terminal_on_stdin_is_a_usage_error_not_a_hang(database, config):
    status, seen = run_on_terminal(["ingest", "-"], config)
    assert status == 2
    assert b"rua: error: - reads a report from standard input" in seen


def test_tls_reports_are_ingested_beside_dmarc_reports_with_the_same_exit_codes(rua, acme, inputs):
    paths = inputs({"a.xml": good("a"), "t.json.gz": tlsbuild.gzipped(tlsbuild.report_bytes())})
    result = rua("ingest", *paths)
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[1] == f"stored     {paths[1]} (1 report, 10 sessions)"     # no records in TLS
    assert lines[2].startswith("2 files: 2 reports stored, 0 duplicates, 0 refused; "
                               "1 record, 5 messages, 10 sessions in ")
    assert TlsReport.get().org_id == acme.id
    assert rua("ingest", paths[1]).exit_code == 0          # a duplicate
    [stray] = inputs({"s.json": tlsbuild.report_bytes([tlsbuild.policy("elsewhere.example")])})
    refused = rua("ingest", stray)
    assert refused.exit_code == 1
    assert "unroutable: no organization monitors elsewhere.example" in refused.stdout
