"""`rua ingest` of report mail verifies its DKIM signatures; a report file is not from mail."""
from store.models import Report
from tests.dnscheck.conftest import _dns_server_session, dns_server  # noqa: F401
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild
from tests.signed_cli import google_mail, run_rua


def test_ingest_verifies_mail_and_leaves_files_unchecked(database, config, dns_server, tmp_path):
    make_domain(make_org(), "example.com")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "signed.eml").write_bytes(google_mail("mail"))
    (inputs / "report.xml").write_bytes(xmlbuild.report_bytes(report_id="file"))
    result = run_rua(database, config, dns_server, "ingest", inputs)
    assert result.exit_code == 0, result.output
    rows = {r.report_id: (r.authenticity, r.authenticity_reason) for r in Report.select()}
    assert rows == {"mail": ("verified", ""), "file": ("unchecked", "not from mail")}
