"""`rua fetch imap` against a real Dovecot: stored once, filed by outcome, nothing deleted."""
from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time

import pytest

from config import Config
from ingest.pipeline import ingest_paths
from intake import imap
from intake.mailbox_url import IntakeError
from store.models import Organization, Report, TlsReport
from tests.cli.outcome import assert_refused
from tests.factories import make_org
from tests.intake.conftest import report_mail, subject, watching
from tests.ingest import tlsbuild, xmlbuild
from tests.servers import free_port

# Each test starts its own Dovecot mailbox (about 4 s): the quick loop leaves them out.
pytestmark = pytest.mark.slow

LIMIT = 200_000


def stored_ids() -> list[str]:
    return sorted(r.report_id for r in Report.select(Report.report_id))


def seed_mixed(box) -> dict[str, str]:
    """Three reports (gzip, zip, plain XML), a message that is no report, one too large."""
    box.append(report_mail("r-gz"), report_mail("r-zip", kind="zip"),
               report_mail("r-xml", kind="xml"),
               subject(xmlbuild.mail({"photo.png": (b"\x89PNG\r\n", "image/png")}), "Hello"),
               subject(xmlbuild.mail({"big.bin": (os.urandom(LIMIT), "application/octet-stream")}),
                       "Too large"))
    return {"done": ["Report r-gz", "Report r-xml", "Report r-zip"],
            "refused": ["Hello", "Too large"]}


def test_every_message_is_ingested_then_filed_by_outcome(rua, acme, box, monkeypatch):
    expected = seed_mixed(box)
    monkeypatch.setenv("RUA_MAX_REPORT_BYTES", str(LIMIT))
    result = rua("fetch", "imap")
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == ["stored"] * 3 + ["refused"] * 2
    assert f"{box.inbox};UID=4: no DMARC or TLS report attachment found" in lines[3]
    assert f"{box.inbox};UID=5:" in lines[4] and "larger than the 200000-byte limit" in lines[4]
    assert lines[-1].startswith("5 files: 3 reports stored, 0 duplicates, 2 refused")
    assert stored_ids() == ["r-gz", "r-xml", "r-zip"]
    assert box.subjects(box.done) == expected["done"]
    assert box.subjects(box.refused) == expected["refused"]
    assert box.subjects(box.inbox) == []


def test_a_second_run_stores_nothing_new_and_a_resent_message_is_a_duplicate(rua, acme, box):
    box.append(report_mail("r-1"), report_mail("r-2"))
    assert rua("fetch", "imap").exit_code == 0
    again = rua("fetch", "imap")
    assert again.exit_code == 0 and again.stdout.startswith("0 files: 0 reports stored")
    box.append(report_mail("r-1"))
    resent = rua("fetch", "imap")
    assert resent.exit_code == 0
    assert resent.stdout.splitlines()[0].startswith(f"duplicate  {box.inbox};UID=3 ")
    assert stored_ids() == ["r-1", "r-2"]
    assert box.subjects(box.done) == ["Report r-1", "Report r-1", "Report r-2"]


def test_json_output_is_one_object_per_message_and_org_takes_every_report(rua, database, box):
    other = make_org("Other")            # monitors nothing: only --org can route to it
    box.append(report_mail("r-1", domain="unmonitored.example"))
    result = rua("fetch", "imap", "--format", "json", "--org", "Other")
    assert result.exit_code == 0, result.stderr
    [line] = result.stdout.splitlines()
    document = json.loads(line)
    assert document["path"] == f"{box.inbox};UID=1" and document["status"] == "stored"
    assert Report.get().org_id == other.id
    assert result.stderr.startswith("1 file: 1 report stored")


def test_a_connection_dropped_mid_batch_loses_nothing_and_stores_nothing_twice(
        acme, box, imap_server, config):
    test_config = config
    box.append(*(report_mail(f"r-{n:02}") for n in range(10)))
    config = with_mailbox(test_config)
    mailbox = imap.parse_url(config.imap_url)
    client, seen = imap.connect(config, mailbox), []

    def handle(result):
        seen.append(result.status)
        if len(seen) == 5:          # inside the second chunk of three, before it is filed
            assert imap_server.kill_sessions() >= 1
    with pytest.raises(imap.DROPPED):
        imap.drain(client, mailbox, config, handle, chunk=3)
    imap.close(client)
    assert len(box.subjects(box.done)) == 3     # only the first chunk was filed
    client = imap.connect(config, mailbox)
    statuses = []
    imap.drain(client, mailbox, config, lambda result: statuses.append(result.status))
    imap.close(client)
    assert statuses == ["duplicate"] * 3 + ["stored"] * 4
    assert stored_ids() == [f"r-{n:02}" for n in range(10)]
    assert box.subjects(box.done) == [f"Report r-{n:02}" for n in range(10)]
    assert box.subjects(box.inbox) == []


def with_mailbox(config) -> Config:
    """The test's store and lock folder with the RUA_IMAP_* settings the box exported."""
    return Config.from_env(os.environ).replace(database_url=config.database_url, offline=True,
                                               lock_dir=config.lock_dir)


def test_starttls_on_the_plain_port_works_like_imaps(rua, acme, box, imap_server, monkeypatch):
    monkeypatch.setenv("RUA_IMAP_URL", imap_server.url(box.inbox, starttls=True))
    box.append(report_mail("r-1"))
    assert rua("fetch", "imap").exit_code == 0
    assert box.subjects(box.done) == ["Report r-1"]


@pytest.mark.parametrize("server", ["imap_server_without_move",
                                    "imap_server_without_move_or_uidplus"])
def test_without_move_a_message_is_copied_then_expunged(rua, acme, request, monkeypatch,
                                                        tmp_path, server):
    from tests.intake.conftest import Box
    box = Box(request.getfixturevalue(server), monkeypatch, tmp_path)
    box.append(report_mail("r-1"), report_mail("r-2"))
    assert rua("fetch", "imap").exit_code == 0
    assert box.subjects(box.done) == ["Report r-1", "Report r-2"]
    assert box.subjects(box.inbox) == []


def test_without_uidplus_a_message_someone_else_marked_deleted_is_never_expunged(
        rua, acme, imap_server_without_move_or_uidplus, monkeypatch, tmp_path):
    from tests.intake.conftest import Box
    box = Box(imap_server_without_move_or_uidplus, monkeypatch, tmp_path)
    box.append(subject(report_mail("r-0"), "Marked by a person"), flags=[rb"\Deleted"])
    box.append(report_mail("r-1"))
    assert rua("fetch", "imap").exit_code == 0
    assert box.subjects(box.done) == ["Report r-1"]
    assert box.subjects(box.inbox) == ["Marked by a person", "Report r-1"]   # both still there
    again = rua("fetch", "imap")          # the copied one, flagged \Deleted, is not read again
    assert again.exit_code == 0 and again.stdout.startswith("0 files")


def test_a_wrong_password_is_one_clear_line(rua, acme, box, tmp_path, monkeypatch):
    (tmp_path / "wrong").write_text("not-the-password\n")
    monkeypatch.setenv("RUA_IMAP_PASSWORD_FILE", str(tmp_path / "wrong"))
    assert_refused(rua("fetch", "imap"), "IMAP login as dmarc at 127.0.0.1:", "refused")


def test_an_untrusted_certificate_is_one_clear_line(rua, acme, box, monkeypatch):
    monkeypatch.delenv("RUA_IMAP_CA_FILE")
    assert_refused(rua("fetch", "imap"), "certificate not trusted", "RUA_IMAP_CA_FILE")
    box.append(report_mail("r-1"))
    assert box.subjects(box.inbox) == ["Report r-1"]     # nothing read, nothing moved


@pytest.mark.parametrize("settings, fragment", [
    ({"RUA_IMAP_URL": ""}, "RUA_IMAP_URL is not set"),
    ({"RUA_IMAP_URL": "imaps://dmarc:secret@127.0.0.1/INBOX"}, "RUA_IMAP_URL holds a password"),
    ({"RUA_IMAP_URL": "https://127.0.0.1/"}, "must start with imaps:// or imap://"),
    ({"RUA_IMAP_PASSWORD_FILE": "/nonexistent/secret"}, "cannot read RUA_IMAP_PASSWORD_FILE"),
    ({"RUA_IMAP_CA_FILE": "/nonexistent/ca.pem"}, "cannot read RUA_IMAP_CA_FILE"),
])
def test_bad_settings_are_one_clear_line(rua, acme, box, monkeypatch, settings, fragment):
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    assert_refused(rua("fetch", "imap"), fragment)


def test_an_unreachable_server_is_one_line_naming_the_setting(rua, acme, box, monkeypatch):
    monkeypatch.setenv("RUA_IMAP_URL", f"imaps://dmarc@127.0.0.1:{free_port()}/INBOX")
    assert_refused(rua("fetch", "imap"), "cannot use the IMAP server 127.0.0.1:",
                   " (RUA_IMAP_URL): Connection refused")


def test_check_logs_in_counts_and_moves_nothing(rua, acme, box, monkeypatch):
    monkeypatch.setenv("RUA_MAX_REPORT_BYTES", str(LIMIT))
    box.append(report_mail("r-1"), report_mail("r-2"))
    box.append(b"Subject: Huge\r\n\r\n" + b"x" * (LIMIT + 1) + b"\r\n")
    result = rua("fetch", "imap", "--check")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(rf"logged in to 127\.0\.0\.1:\d+ as dmarc; {box.inbox} holds "
                        rf"3 message\(s\), [\d,]+ bytes", lines[0]), lines[0]
    assert lines[1] == ("1 of them larger than RUA_MAX_REPORT_BYTES: a fetch files them as "
                        "refused unread")
    assert lines[2:4] == [f"filed into {box.done} (created on first use)",
                          f"filed into {box.refused} (created on first use)"]
    assert lines[4].endswith("this check moved nothing")
    assert box.subjects(box.inbox) == ["Huge", "Report r-1", "Report r-2"]
    assert box.subjects(box.done) == [] and stored_ids() == []
    with box.client() as client:       # not even marked seen
        client.select_folder(box.inbox, readonly=True)
        assert client.search(["SEEN"]) == []


def test_check_says_why_it_cannot_log_in(rua, acme, box, tmp_path, monkeypatch):
    (tmp_path / "wrong").write_text("not-the-password\n")
    monkeypatch.setenv("RUA_IMAP_PASSWORD_FILE", str(tmp_path / "wrong"))
    assert_refused(rua("fetch", "imap", "--check"), "IMAP login as dmarc at 127.0.0.1:",
                   "refused")


def test_a_missing_folder_is_one_clear_line(rua, acme, box, imap_server, monkeypatch):
    monkeypatch.setenv("RUA_IMAP_URL", imap_server.url("no-such-folder"))
    assert_refused(rua("fetch", "imap"), "cannot open the folder 'no-such-folder'")


def test_watch_picks_up_a_message_appended_while_idle_and_survives_a_dropped_connection(
        acme, box, imap_server, config):
    with watching(config, box.settings) as (out, err):
        assert imap_server.wait_for_idle(), (out.lines, err.lines)     # connected and idle
        box.append(report_mail("r-1"))
        # The batch's summary line comes after its messages are filed.
        assert out.wait_for("1 file: 1 report stored"), (out.lines, err.lines)
        assert imap_server.kill_sessions() >= 1
        assert err.wait_for("reconnected to 127.0.0.1:"), err.lines
        assert imap_server.wait_for_idle(), (out.lines, err.lines)     # idle again
        box.append(report_mail("r-2"))
        assert out.wait_for("1 file: 1 report stored", count=2), (out.lines, err.lines)
        # The refresh comes after the summary: stopping the watcher before its end would
        # leave the organization marked as being refreshed.
        assert err.wait_for("snapshots: refreshed", count=2), (out.lines, err.lines)
    assert any("lost" in line and "reconnecting in 1 s" in line for line in err.lines)
    assert stored_ids() == ["r-1", "r-2"]
    assert box.subjects(box.done) == ["Report r-1", "Report r-2"]
    assert Organization.get().dirty_since is None     # each batch refreshed the snapshots


def test_idle_returns_at_its_timeout_or_as_soon_as_a_message_arrives(acme, box, config):
    config = with_mailbox(config)
    mailbox = imap.parse_url(config.imap_url)
    client = imap.connect(config, mailbox)
    try:
        assert imap.drain(client, mailbox, config, lambda result: None) == 0   # selects it
        started = time.monotonic()
        imap.wait_for_change(client, 0.5)      # nothing happens: back after the timeout
        assert 0.4 < time.monotonic() - started < 5
        threading.Timer(0.5, box.append, [report_mail("r-1")]).start()
        started = time.monotonic()
        imap.wait_for_change(client, 60)       # the EXISTS ends it early
        waited = time.monotonic() - started
        box.append(report_mail("r-2"))         # between two IDLEs: seen before the next one
        started = time.monotonic()
        imap.wait_for_change(client, 60)
        assert time.monotonic() - started < 1 and waited < 10
        handled = imap.drain(client, mailbox, config, lambda result: None)
    finally:
        imap.close(client)
    assert handled == 2 and stored_ids() == ["r-1", "r-2"]


def test_the_first_connection_failing_stops_watch_at_once(box, tmp_path, monkeypatch):
    (tmp_path / "wrong").write_text("nope")
    config = Config.from_env(os.environ).replace(imap_password_file=str(tmp_path / "wrong"))
    with pytest.raises(IntakeError, match="refused"):
        imap.watch(config, lambda client, mailbox: None, lambda message: None)


def test_the_corpus_mail_files_are_fetched_as_rua_ingest_reads_them(rua, database, box, config,
                                                                     corpus_dir):
    paths = sorted(corpus_dir.rglob("*.eml"))
    make_org("by-ingest"), make_org("by-fetch")
    expected = [list(ingest_paths([str(path)], config=config, org="by-ingest")) for path in paths]
    box.append(*(path.read_bytes() for path in paths))
    result = rua("fetch", "imap", "--org", "by-fetch", "--format", "json")
    got = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(got) == len(paths) and result.exit_code == 1
    for path, [want], have in zip(paths, expected, got):
        assert have["status"] == want.status, (path, have["error"], want.error)
        assert [_kept(r) for r in have["reports"]] == [_kept(r) for r in want.reports], path
    refused = sum(r.status == "refused" for [r] in expected)
    assert 0 < refused < len(paths)
    assert len(box.subjects(box.refused)) == refused
    assert len(box.subjects(box.done)) == len(paths) - refused
    again = rua("fetch", "imap", "--org", "by-fetch")
    assert again.exit_code == 0 and again.stdout.startswith("0 files")


def _kept(report: dict) -> tuple:
    return (report["report_id"], report["domain"], report["records"], report["messages"],
            report["status"])


def test_tls_reports_are_stored_and_failure_reports_refused_by_name(rua, acme, box):
    box.append(subject(tlsbuild.mail(tlsbuild.gzipped(tlsbuild.report_bytes())), "TLS report"),
               subject(tlsbuild.failure_report_mail(), "Failure report"))
    result = rua("fetch", "imap")
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("stored") and lines[1].startswith("refused")
    assert "a DMARC failure (forensic) report" in lines[1]
    assert TlsReport.get().report_id == "tls-1"
    assert box.subjects(box.done) == ["TLS report"]
    assert box.subjects(box.refused) == ["Failure report"]
