"""The corpus's real report mail (RUA_CORPUS) read offline: its signatures are seen, never
checked, so no report is ever verified without DNS."""
from ingest.files import sniff
from ingest.pipeline import ingest_paths
from dnscheck.mail_signatures import MailSignatures
from store.models import Report, TlsReport
from tests.factories import make_org


def messages(corpus):
    for path in sorted(corpus.rglob("*")):
        if path.is_file() and "forensic" not in path.parts:
            data = path.read_bytes()
            if sniff(data[:4096]) == "email":
                yield path, data


def test_signed_corpus_mail_read_offline_is_unchecked_never_verified(corpus_dir, config):
    attest = MailSignatures(config)      # the tests' config is offline
    seen = {}
    for path, data in messages(corpus_dir):
        proven = attest(data)
        seen[proven.authenticity] = seen.get(proven.authenticity, 0) + 1
        signed = b"\ndkim-signature:" in data.lower() or data.lower().startswith(b"dkim-signature:")
        assert proven.authenticity == ("unchecked" if signed else "unsigned"), path
    assert set(seen) == {"unchecked", "unsigned"} and seen["unchecked"] >= 60


def test_the_corpus_ingested_offline_has_no_verified_report(corpus_dir, database, config):
    make_org(name="Corpus")
    folders = [corpus_dir / "aggregate", corpus_dir / "tlsrpt"]
    list(ingest_paths(folders, config=config, org="Corpus", attest=MailSignatures(config)))
    stored = [r.authenticity for r in Report.select()] + [r.authenticity for r in TlsReport.select()]
    assert stored and "verified" not in stored
    assert {"unchecked", "unsigned"} <= set(stored)
