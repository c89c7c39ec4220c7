"""A message's budget is read before the costly work: header blocks, parameters, parts and
nesting are refused while the message is walked, and the reports before the refusal stay."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ingest.deadline import MessageDeadline
from ingest.files import iter_documents
from ingest.mail import (MAX_HEADER_BYTES, MAX_PARAMETERS, MessageRefused, mbox_messages,
                         message_parts)
from ingest.model import Document, ReportError
from tests.ingest import hostile_mail
from tests.ingest import xmlbuild as xb
from tests.intake.killer import ROOT

MB = 1 << 20
CAP = 64 * MB       # RUA_MAX_REPORT_BYTES: no message over it is read
WORKER = ("import sys\nsys.path.insert(0, sys.argv[1])\n"
          "from ingest.files import iter_documents\n"
          "items = list(iter_documents(sys.argv[2], max_bytes=64 << 20, max_depth=4,"
          " max_input_bytes=128 << 20, max_members=1000))\n"
          "print(items[-1].reason)")
# Runs the worker (its code, then its arguments) and prints the worker's peak and output.
LAUNCHER = ("import resource, subprocess, sys\n"
            "done = subprocess.run([sys.executable, '-c', *sys.argv[1:]],"
            " capture_output=True, text=True, check=True)\n"
            "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
            "print(peak, done.stdout)")


def read(path, **limits):
    items = list(iter_documents(str(path), max_bytes=CAP, max_depth=4, **limits))
    return ([i.origin for i in items if isinstance(i, Document)],
            [i.reason for i in items if not isinstance(i, Document)])


def parts(raw: bytes, max_depth: int = 4, max_parts: int = 1000):
    return list(message_parts(raw, max_depth=max_depth, max_parts=max_parts))


def test_a_header_block_over_its_budget_is_refused_unparsed(tmp_path):
    (tmp_path / "m.eml").write_bytes(hostile_mail.semicolons())
    assert read(tmp_path / "m.eml") == ([], [
        f"{tmp_path / 'm.eml'}: a header block longer than {MAX_HEADER_BYTES} bytes; "
        "the rest of it is not read"])


@pytest.mark.parametrize("count, reason", [
    (MAX_PARAMETERS + 1, f"a Content-Type field with more than {MAX_PARAMETERS} parameters"),
    (9000, "a Content-Type field longer than 8192 bytes"),
])
def test_a_parameter_field_over_its_budget_is_refused(count, reason):
    with pytest.raises(MessageRefused, match=reason):
        parts(hostile_mail.semicolons(count))


def test_nesting_deeper_than_the_archive_depth_is_refused():
    report = b"Content-Type: text/xml\n\n" + xb.report_bytes()
    assert [p[1] for p in parts(hostile_mail.nested(4, report))] == ["text/xml"]
    with pytest.raises(MessageRefused, match=r"nested more than 4 levels deep \(RUA_MAX_ARCHIVE"):
        parts(hostile_mail.nested(5, report))
    with pytest.raises(MessageRefused):
        parts(hostile_mail.nested(100_000))


def test_parts_past_the_budget_are_refused_and_those_before_stay(tmp_path):
    assert len(parts(hostile_mail.many_parts(10), max_parts=10)) == 10
    with pytest.raises(MessageRefused, match=r"more than 10 MIME parts \(RUA_MAX_MEMBERS\)"):
        parts(hostile_mail.many_parts(11), max_parts=10)
    good = xb.mail({"a.xml": (xb.report_bytes(report_id="a"), "text/xml")})
    delimiter = b"--" + good.split(b'boundary="')[1].split(b'"')[0]
    flood = good.replace(delimiter + b"--", (delimiter + b"\n") * 2000 + delimiter + b"--")
    (tmp_path / "flood.eml").write_bytes(flood)
    documents, refused = read(tmp_path / "flood.eml", max_members=1000)
    assert [d.rsplit(" » ", 1)[1] for d in documents] == ["a.xml"]
    assert refused == [f"{tmp_path / 'flood.eml'}: more than 1000 MIME parts (RUA_MAX_MEMBERS); "
                       "the rest of it is not read"]


def test_an_mbox_counts_each_message_as_a_member(tmp_path):
    message = xb.mail({"a.xml": (xb.report_bytes(), "text/xml")})
    separator = b"From x Thu Jan  1 00:00:00 2026\n"
    (tmp_path / "box.mbox").write_bytes((separator + message + b"\n") * 5)
    documents, refused = read(tmp_path / "box.mbox", max_members=3)
    assert len(documents) == 3 and refused[-1].endswith(
        "more than 3 archive members in one input file (RUA_MAX_MEMBERS); "
        "the rest of it is not read")
    assert list(mbox_messages(b"From a\n\nFrom b\n>From c\n")) == [b"\n", b"From c\n"]


def test_the_empty_parts_message_stays_within_a_bound_of_its_size(tmp_path):
    """66 MB of empty parts took 1.9 GB; the walk now keeps a few copies of the message at most.
    Peak resident size of a worker process, under a bound of four times the cap. A process's
    peak counts what its parent held when it was forked, so a small launcher forks the worker
    and reads its peak (RUSAGE_CHILDREN), not the test's own large process."""
    path = tmp_path / "empty.eml"
    path.write_bytes(hostile_mail.empty_parts(66_000_000))
    done = subprocess.run([sys.executable, "-c", LAUNCHER, WORKER, str(ROOT), str(path)],
                          capture_output=True, text=True, check=True)
    peak, reason = done.stdout.split(" ", 1)
    assert "more than 1000 MIME parts" in reason
    assert int(peak) < 4 * CAP


def test_a_deadline_refuses_records_once_passed():
    now = [0.0]
    deadline = MessageDeadline(10, clock=lambda: now[0])
    records = deadline.watch(iter(range(1000)))
    assert next(records) == 0 and not deadline.passed()
    now[0] = 10.0
    spent = r"its 10-second budget is spent \(RUA_MAX_MESSAGE_SECONDS\)"
    with pytest.raises(ReportError, match=spent):
        list(records)
    assert MessageDeadline(0, clock=time.monotonic).passed()
