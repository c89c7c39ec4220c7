"""`rua fetch maildir` verifies each message's DKIM signatures, each key asked once a run."""
from store.models import Report
from tests.dnscheck.conftest import _dns_server_session, dns_server  # noqa: F401
from tests.intake.conftest import make_maildir
from tests.signed_cli import google_mail, run_rua


def test_fetched_report_mail_keeps_what_it_proves(database, config, acme, dns_server, tmp_path):
    maildir = make_maildir(tmp_path / "Maildir")
    for number in range(3):
        (maildir / "new" / f"{number}.a.host").write_bytes(google_mail(f"g-{number}"))
    (maildir / "new" / "9.a.host").write_bytes(google_mail("plain", sign=False))
    result = run_rua(database, config, dns_server, "fetch", "maildir", maildir)
    assert result.exit_code == 0, result.output
    assert {r.report_id: r.authenticity for r in Report.select()} == {
        "g-0": "verified", "g-1": "verified", "g-2": "verified", "plain": "unsigned"}
    assert len(dns_server.asked("s1._domainkey.google.com", "TXT")) == 1
