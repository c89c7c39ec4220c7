"""The real-world corpus (RUA_CORPUS): every good file stored, every broken one refused alone."""
import json
import re

import pytest
from click.testing import CliRunner

from cli import main
from ingest.files import iter_documents
from ingest.model import Document
from ingest.pipeline import ingest_paths
from store import db
from store.models import Record, Report
from tests.factories import make_org

_COUNT = re.compile(rb"<(?:[\w.-]+:)?count>\s*(\d+)\s*</(?:[\w.-]+:)?count>")
_RECORD = re.compile(rb"<(?:[\w.-]+:)?record[\s>]")
# Schema violations of element order only; the MANIFEST allows a lenient parser to accept them.
LENIENT = {"invalid-dkim-spf-seq.xml", "invalid-feedback-seq.xml", "invalid-spf-dkim-seq.xml"}


def files(folder):
    return sorted(str(p) for p in folder.rglob("*") if p.is_file())


def xml_sums(path, config) -> tuple[int, int]:
    """(<count> sum, <record> elements) over the XML documents the file holds, read with regexes."""
    messages = records = 0
    for item in iter_documents(path, max_bytes=config.max_report_bytes,
                               max_depth=config.max_archive_depth):
        if isinstance(item, Document):
            with item.open() as stream:
                data = stream.read()
            messages += sum(int(n) for n in _COUNT.findall(data))
            records += len(_RECORD.findall(data))
    return messages, records


def test_every_good_corpus_file_is_stored_with_the_counts_its_xml_holds(database, config,
                                                                          corpus_dir):
    paths = files(corpus_dir / "aggregate")
    assert len(paths) > 250
    for path in paths:
        org = make_org()   # one organization per file, so the corpus's resends stay separate
        [result] = ingest_paths([path], config=config, org=org)
        assert result.status == "stored", (path, result.error)
        messages, records = xml_sums(path, config)
        assert sum(r["messages"] for r in result.reports) == messages, path
        assert sum(r["records"] for r in result.reports) == records, path
        stored = Report.select().where(Report.org == org)
        assert sum(r.total_messages for r in stored) == messages, path
        assert Record.select().where(Record.org == org).count() == records, path


def test_rua_ingest_of_the_whole_corpus_stores_each_report_once(database, config, corpus_dir):
    make_org("corpus-test")
    result = CliRunner().invoke(main, ["ingest", "--org", "corpus-test", "--format", "json",
                                       str(corpus_dir / "aggregate")],
                                # an archive of many domains is imported past the default caps
                                env={"RUA_DATABASE_URL": config.database_url,
                                     "RUA_MAX_AUTO_DOMAINS": "10000",
                                     "RUA_MAX_AUTO_DOMAINS_PER_DAY": "10000"})
    db.initialize(database)   # the command pointed the shared proxy at its own connection
    # Projects share sample reports and edit them: same reporter, id, domain and period with
    # other records, refused as conflicting copies of the one stored first.
    assert result.exit_code == 1, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == len(files(corpus_dir / "aggregate"))
    assert {line["status"] for line in lines} == {"stored", "duplicate", "refused"}
    refused = [line["error"] for line in lines if line["status"] == "refused"]
    assert all(": conflicting copy: report " in error for error in refused), refused
    stored = [r for line in lines for r in line["reports"] if r["status"] == "stored"]
    assert Report.select().count() == len(stored) == len({r["id"] for r in stored})
    assert sum(r.total_messages for r in Report.select()) == sum(r["messages"] for r in stored)
    assert f"{len(lines)} files: {len(stored)} reports stored" in result.stderr


@pytest.mark.parametrize("lenient", [False, True], ids=["broken", "element-order"])
def test_every_malformed_corpus_file_is_refused_with_a_reason_and_nothing_stored(
        database, config, corpus_dir, lenient):
    paths = [p for p in files(corpus_dir / "aggregate_malformed")
             if (p.rsplit("/", 1)[-1] in LENIENT) == lenient]
    assert paths
    for path in paths:
        org = make_org()
        [result] = ingest_paths([path], config=config, org=org)
        if lenient and result.status == "stored":
            assert sum(r["messages"] for r in result.reports) == xml_sums(path, config)[0]
            continue
        assert result.status == "refused", path
        assert result.error.startswith(path) and "\n" not in result.error, result.error
        assert len(result.error) < 500 and "Traceback" not in result.error
        assert result.reports == []
        assert Report.select().where(Report.org == org).count() == 0, path
        assert Record.select().where(Record.org == org).count() == 0, path
