"""Names from strangers are cut to a sane length, with a marker, in text, JSON and logs."""
from __future__ import annotations

import json
import logging

import pytest

from ingest.printable import NAME_LIMIT, bounded
from intake.jobs import fetch_configured
from tests.factories import make_domain, make_org
from tests.intake.conftest import make_maildir
from tests.ingest import xmlbuild

LONGEST_LINE = 2000


@pytest.fixture
def acme(database):
    make_domain(make_org("Acme"), "example.com")


def test_bounded_cuts_a_long_name_and_says_how_much():
    assert bounded("r.xml") == "r.xml"
    assert bounded("x" * NAME_LIMIT) == "x" * NAME_LIMIT
    assert bounded("x" * 150_139) == "x" * NAME_LIMIT + "…[149,939 more characters]"


def long_names_zip(tmp_path):
    path = tmp_path / "names.zip"
    path.write_bytes(xmlbuild.zipped({
        "n" * 60_000 + ".xml": b"<feedback>",
        "good.xml": xmlbuild.report_bytes(report_id="i" * 100_000, org_name="o" * 100_000)}))
    return path


@pytest.mark.parametrize("output", ["text", "json"])
def test_rua_ingest_prints_long_names_cut(acme, rua, tmp_path, output):
    result = rua("ingest", "--format", output, long_names_zip(tmp_path))
    assert result.exit_code == 1, result.output
    assert max(len(line) for line in result.output.splitlines()) < LONGEST_LINE
    line = result.output.splitlines()[0]
    assert "n" * NAME_LIMIT + "…[59,804 more characters]" in line
    if output == "json":
        [report] = json.loads(line)["reports"]
        assert report["report_id"].endswith("…[55 more characters]")     # the column holds 255
        assert report["org_name"].endswith("…[55 more characters]")


def test_the_fetch_job_logs_a_long_attachment_name_cut(acme, config, tmp_path, caplog):
    box = make_maildir(tmp_path / "box")
    name = "a" * 1000 + ".zip"      # within a header's budget, so the message is read
    (box / "new" / "1.eml").write_bytes(xmlbuild.mail({name: (b"not a zip", "application/zip")}))
    with caplog.at_level(logging.WARNING, logger="rua.fetch"):
        fetch_configured(config.replace(maildir=str(box)))
    [refused] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused")]
    assert "a" * NAME_LIMIT + "…[804 more characters]" in refused
    assert len(refused) < LONGEST_LINE
