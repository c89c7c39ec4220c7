"""`rua` run as a user runs it, with the tests' DNS server as its resolver (for DKIM keys)."""
from __future__ import annotations

from click.testing import CliRunner

from tests.signed_mail import report_message, rsa_key, signed
from tests.ingest import xmlbuild

KEY = rsa_key("google.com", "s1", 1024)


def google_mail(report_id: str, *, sign: bool = True) -> bytes:
    """A report message from google.com, signed with KEY (or not)."""
    xml = xmlbuild.report_bytes(org_name="google.com", report_id=report_id,
                                metadata={"email": "noreply-dmarc-support@google.com"})
    message = report_message(attachment=xml)
    return signed(message, KEY) if sign else message


def run_rua(database, config, dns_server, *args: str):
    """`rua ARGS` against the test's store, KEY published; click's Result."""
    from cli import main
    from store import db
    dns_server.zone("google.com", KEY.zone_line())
    result = CliRunner().invoke(main, [str(a) for a in args], env={
        "RUA_DATABASE_URL": config.database_url, "RUA_LOCK_DIR": config.lock_dir,
        "RUA_DNS_NAMESERVERS": "127.0.0.1", "RUA_DNS_PORT": str(dns_server.port),
        "RUA_DNS_TIMEOUT": "0.5"})
    db.initialize(database)     # the command pointed the shared proxy at its own connection
    return result
