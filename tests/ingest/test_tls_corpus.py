"""The real-world TLS report corpus (RUA_CORPUS): every file stored, routed by its policy
domains, with the session totals its JSON holds; failure reports refused by name."""
import json

from ingest.files import iter_documents
from ingest.model import Document
from ingest.pipeline import ingest_paths
from store.models import Domain, ReportCopy, TlsPolicy, TlsReport
from tests.factories import make_domain, make_org


def files(folder):
    return sorted(str(p) for p in folder.rglob("*") if p.is_file())


def json_documents(path, config) -> list[dict]:
    """The JSON objects the file holds, read here with json alone."""
    found = []
    for item in iter_documents(path, max_bytes=config.max_report_bytes,
                               max_depth=config.max_archive_depth):
        if isinstance(item, Document):
            with item.open() as stream:
                found.append(json.loads(stream.read()))
    return found


def session_sums(documents) -> tuple[int, int]:
    successful = failed = 0
    for document in documents:
        for policy in document["policies"]:
            successful += int(policy["summary"]["total-successful-session-count"])
            failed += int(policy["summary"]["total-failure-session-count"])
    return successful, failed


def policy_domains(documents) -> set[str]:
    return {str(p["policy"].get("policy-domain", "")).lower().rstrip(".")
            for d in documents for p in d["policies"]} - {""}


def test_every_tls_corpus_file_is_stored_with_the_sessions_its_json_holds(database, config,
                                                                           corpus_dir):
    paths = files(corpus_dir / "tlsrpt")
    assert len(paths) >= 18
    for path in paths:
        documents = json_documents(path, config)
        assert documents, path
        org = make_org()   # one organization per file, monitoring the file's policy domains
        for name in policy_domains(documents):
            make_domain(org, name)
        [result] = ingest_paths([path], config=config)
        assert result.status == "stored", (path, result.error)
        successful, failed = session_sums(documents)
        stored = list(TlsReport.select().where(TlsReport.org == org))
        assert len(stored) == len(documents), path
        assert sum(r.successful_sessions for r in stored) == successful, path
        assert sum(r.failed_sessions for r in stored) == failed, path
        by_policy = TlsPolicy.select().where(TlsPolicy.org == org)
        assert sum(p.failed_sessions for p in by_policy) == failed, path
        assert [r["sessions"] for r in result.reports] == [
            r.successful_sessions + r.failed_sessions for r in stored], path
        Domain.delete().where(Domain.org == org).execute()   # the next file's domains route alone


def test_the_corpus_tls_reports_are_duplicates_the_second_time(database, config, corpus_dir):
    org = make_org("tls-corpus")
    paths = files(corpus_dir / "tlsrpt")
    first = list(ingest_paths(paths, config=config, org=org))
    copies = ReportCopy.select().count()
    again = list(ingest_paths(paths, config=config, org=org))
    # Projects share RFC 8460's sample and edit it: same reporter, id and period with other
    # content, kept aside as conflicting copies of the one stored first, once each.
    conflicting = [r.path for r in first if r.status == "refused"]
    assert all(": conflicting copy: TLS report " in r.error for r in first if r.path in conflicting)
    assert all(r.status in ("stored", "duplicate") for r in first if r.path not in conflicting)
    assert [r.path for r in again if r.status == "refused"] == conflicting
    assert all(r.status == "duplicate" for r in again if r.path not in conflicting)
    assert ReportCopy.select().count() == copies <= len(conflicting)
    keys = {(r.org_name, r.report_id, r.date_begin, r.date_end) for r in TlsReport.select()}
    assert TlsReport.select().count() == len(keys)


def test_every_failure_report_of_the_corpus_is_refused_naming_it(database, config, corpus_dir):
    paths = files(corpus_dir / "forensic")
    assert len(paths) >= 10
    for path in paths:
        [result] = ingest_paths([path], config=config, org=make_org())
        assert result.status == "refused", path
        assert "failure (forensic) report" in result.error, (path, result.error)
