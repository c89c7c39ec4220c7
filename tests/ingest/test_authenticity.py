"""What report mail proves, kept on every report and used: a copy that speaks for its reporter
takes the place of one that does not, and RUA_REQUIRE_DKIM_FROM refuses unsigned claims."""
from __future__ import annotations

from datetime import timedelta

import pytest

from dnscheck.mail_signatures import MailSignatures
from ingest import replacing
from ingest.pipeline import ingest_message
from store.clock import utcnow
from store.models import Event, Report, ReportCopy, TlsReport
from tests.factories import make_domain, make_org
from tests.ingest import tlsbuild as tb
from tests.ingest import xmlbuild as xb
from tests.signed_mail import report_message, rsa_key, signed

GOOGLE_KEY = rsa_key("google.com", "s1", 1024)
FORGER_KEY = rsa_key("forger.example", "f1", 1024)
YAHOO_KEY = rsa_key("yahoo.com", "y1", 1024)
GOOGLE = "noreply-dmarc-support@google.com"


@pytest.fixture
def org(database, dns_server):
    for key in (GOOGLE_KEY, FORGER_KEY, YAHOO_KEY):
        dns_server.zone(key.domain, key.zone_line())
    org = make_org()
    make_domain(org, "example.com")
    return org


@pytest.fixture
def attest(dns_config):
    return MailSignatures(dns_config)


def google_report(count: int = 1, email: str = GOOGLE) -> bytes:
    return xb.report_bytes([xb.record(count=count)], org_name="google.com",
                           report_id="g-1", metadata={"email": email})


def arrive(config, attest, message: bytes, origin: str = "m1"):
    return ingest_message(origin, message, config=config, attest=attest)


def test_a_report_in_signed_mail_is_stored_verified(dns_config, attest, org):
    result = arrive(dns_config, attest, signed(report_message(attachment=google_report()),
                                               GOOGLE_KEY))
    assert result.status == "stored", result.error
    report = Report.get()
    assert (report.authenticity, report.signed_by, report.authenticity_reason) == (
        "verified", "google.com", "")


def test_a_tls_report_in_unsigned_mail_is_stored_unsigned(dns_config, attest, org):
    data = tb.report_bytes(org_name="Google Inc.", contact="smtp-tls-reporting@google.com")
    message = report_message(attachment=data, content_type="application/tlsrpt+json",
                             name="report.json")
    assert arrive(dns_config, attest, message).status == "stored"
    assert (TlsReport.get().authenticity, TlsReport.get().signed_by) == ("unsigned", "")


def test_a_copy_that_speaks_for_its_reporter_takes_the_place_of_one_that_does_not(
        dns_config, attest, org):
    forged = report_message(attachment=google_report(count=500))
    assert arrive(dns_config, attest, forged, "forged").status == "stored"
    genuine = signed(report_message(attachment=google_report(count=3)), GOOGLE_KEY)
    result = arrive(dns_config, attest, genuine, "genuine")
    assert result.status == "stored", result.error
    report = Report.get()
    assert (report.total_messages, report.authenticity) == (3, "verified")
    kept = ReportCopy.get()
    assert (kept.reason, kept.authenticity) == ("replaced", "unsigned")
    event = Event.get(Event.type == "conflicting_copy")
    assert event.dedupe_key.endswith(":took_place")
    assert "speaks for its reporter" in event.detail and f"replace {kept.id}" in event.detail


def test_no_other_copy_replaces_a_report_by_itself(dns_config, attest, org):
    genuine = signed(report_message(attachment=google_report(count=3)), GOOGLE_KEY)
    assert arrive(dns_config, attest, genuine, "genuine").status == "stored"
    # A forger signing with its own domain, then unsigned: both only kept aside.
    for origin, message in (
            ("own-domain", signed(report_message("dmarc@forger.example",
                                                 attachment=google_report(count=9)), FORGER_KEY)),
            ("unsigned", report_message(attachment=google_report(count=8)))):
        result = arrive(dns_config, attest, message, origin)
        assert result.status == "refused" and "conflicting copy" in result.error
    assert Report.get().total_messages == 3
    # The forger's mail is verified for its own From, yet speaks for no google.com reporter.
    assert [(c.authenticity, c.signed_by) for c in ReportCopy.select().order_by(ReportCopy.id)] \
        == [("verified", "forger.example"), ("unsigned", "")]


def test_a_verified_report_whose_contact_is_elsewhere_does_not_speak_for_its_reporter(
        dns_config, attest, org):
    assert arrive(dns_config, attest, report_message(attachment=google_report(count=5)),
                  "first").status == "stored"
    yahoo = signed(report_message("noreply@dmarc.yahoo.com",
                                  attachment=google_report(count=6, email="dmarchelp@yahooinc.com")),
                   YAHOO_KEY)
    result = arrive(dns_config, attest, yahoo, "yahoo")
    assert result.status == "refused"
    assert ReportCopy.get().authenticity == "verified"       # verified, yet only kept aside
    assert Report.get().total_messages == 5


def test_an_operators_replace_stands_over_the_rule(dns_config, attest, org):
    unsigned = report_message(attachment=google_report(count=5))
    arrive(dns_config, attest, unsigned, "unsigned")
    arrive(dns_config, attest, signed(report_message(attachment=google_report(count=3)),
                                      GOOGLE_KEY), "genuine")
    put_back = ReportCopy.get(ReportCopy.authenticity == "unsigned")
    replacing.replace(put_back.id, apply=True)         # the operator wants the unsigned one
    assert (Report.get().total_messages, Report.get().authenticity) == (5, "unsigned")
    again = signed(report_message(attachment=google_report(count=4)), GOOGLE_KEY)
    result = arrive(dns_config, attest, again, "again")
    assert result.status == "refused" and "conflicting copy" in result.error
    assert Report.get().total_messages == 5


@pytest.fixture
def requiring(dns_config):
    return dns_config.replace(require_dkim_from="google.com")


def test_require_dkim_from_refuses_unsigned_fresh_mail_claiming_a_listed_reporter(
        requiring, attest, org):
    for number in range(2):
        forged = report_message(attachment=xb.report_bytes(
            org_name="google.com", report_id=f"f-{number}", metadata={"email": GOOGLE}))
        result = arrive(requiring, attest, forged, f"forged-{number}")
        assert result.status == "refused"
        assert "claims google.com (RUA_REQUIRE_DKIM_FROM) but its mail is unsigned" in result.error
    assert Report.select().count() == 0
    assert Event.select().where(Event.type == "unauthenticated_reports").count() == 1


@pytest.mark.parametrize("sender, key, org_name", [
    ("dmarc@forger.example", FORGER_KEY, "google.com"),      # signed by another domain
    (GOOGLE, FORGER_KEY, "Google"),                         # a relay's signature only
])
def test_require_dkim_from_refuses_mail_not_signed_by_the_claimed_reporter(
        requiring, attest, org, sender, key, org_name):
    message = signed(report_message(sender, attachment=xb.report_bytes(
        org_name=org_name, metadata={"email": "dmarc@forger.example"})), key)
    result = arrive(requiring, attest, message)
    assert result.status == "refused" and "RUA_REQUIRE_DKIM_FROM" in result.error


def test_require_dkim_from_keeps_archives_offline_mail_and_signed_mail(requiring, attest, org):
    old = report_message(date=utcnow() - timedelta(days=8), attachment=xb.report_bytes(
        org_name="google.com", report_id="old", metadata={"email": GOOGLE}))
    assert arrive(requiring, attest, old, "old").status == "stored"
    offline = report_message(attachment=xb.report_bytes(
        org_name="google.com", report_id="offline", metadata={"email": GOOGLE}))
    assert arrive(requiring.replace(offline=True), MailSignatures(requiring.replace(offline=True)),
                  signed(offline, GOOGLE_KEY), "offline").status == "stored"
    genuine = signed(report_message(attachment=xb.report_bytes(
        org_name="google.com", report_id="genuine", metadata={"email": GOOGLE})), GOOGLE_KEY)
    assert arrive(requiring, attest, genuine, "genuine").status == "stored"
    other = report_message("dmarc@receiver.example", attachment=xb.report_bytes(report_id="o"))
    assert arrive(requiring, attest, other, "other").status == "stored"    # claims no listed one
    assert {r.report_id: r.authenticity for r in Report.select()} == {
        "old": "unsigned", "offline": "unchecked", "genuine": "verified", "o": "unsigned"}


def test_a_signed_tls_report_takes_the_place_of_an_unsigned_copy(dns_config, attest, org):
    def tls_mail(successful: int) -> bytes:
        data = tb.report_bytes([tb.policy("example.com", successful)], org_name="Google Inc.",
                               contact="smtp-tls-reporting@google.com")
        return report_message("noreply-smtp-tls-reporting@google.com", attachment=data,
                              content_type="application/tlsrpt+json", name="report.json")
    assert arrive(dns_config, attest, tls_mail(999), "forged").status == "stored"
    result = arrive(dns_config, attest, signed(tls_mail(7), GOOGLE_KEY), "genuine")
    assert result.status == "stored", result.error
    report = TlsReport.get()
    assert (report.successful_sessions, report.authenticity) == (7, "verified")
    assert (ReportCopy.get().kind, ReportCopy.get().authenticity) == ("tlsrpt", "unsigned")
