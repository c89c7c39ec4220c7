"""Build SMTP TLS reports (RFC 8460 JSON) and messages carrying them, for tests."""
from __future__ import annotations

import base64
import json
from email.message import EmailMessage

from tests.ingest.xmlbuild import gzipped


def policy(domain="example.com", successful=10, failed=0, failures=None, policy_type="sts",
           **extra) -> dict:
    """One `policies` entry; failures: {result type: failed sessions}."""
    entry = {"policy": {"policy-type": policy_type, "policy-domain": domain, **extra},
             "summary": {"total-successful-session-count": successful,
                         "total-failure-session-count": failed}}
    if failures is not None:
        entry["failure-details"] = [{"result-type": kind, "failed-session-count": count}
                                    for kind, count in failures.items()]
    return entry


def report(policies=None, *, org_name="Example Sender", report_id="tls-1",
           start="2026-08-01T00:00:00Z", end="2026-08-01T23:59:59Z",
           contact="tls@sender.example") -> dict:
    document = {"organization-name": org_name, "report-id": report_id,
                "date-range": {"start-datetime": start, "end-datetime": end},
                "policies": [policy()] if policies is None else policies}
    if contact is not None:
        document["contact-info"] = contact
    return document


def report_bytes(*args, indent=1, **kwargs) -> bytes:
    return json.dumps(report(*args, **kwargs), indent=indent).encode()


def kinds(count: int, start: int = 0) -> dict[str, int]:
    """count distinct result types (made-up ones, "type-N"), one failed session each."""
    return {f"type-{n}": 1 for n in range(start, start + count)}


def mail(data: bytes, content_type="application/tlsrpt+gzip", name="r.json.gz",
         cte="base64") -> bytes:
    """A multipart/report; report-type=tlsrpt message with the report attached."""
    message = EmailMessage()
    message["From"] = "tlsrpt@sender.example"
    message["Subject"] = "Report Domain: example.com"
    message.set_content("This is an aggregate TLS report.")
    maintype, subtype = content_type.split("/")
    message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name, cte=cte)
    message.replace_header("Content-Type", message["Content-Type"].replace(
        "multipart/mixed", "multipart/report; report-type=tlsrpt"))
    return message.as_bytes()


def base64_twice(data: bytes) -> bytes:
    """The report base64-encoded once more, as a few reporters send the attachment's body."""
    return base64.encodebytes(data)


def failure_report_mail() -> bytes:
    """A DMARC failure (forensic) report: multipart/report with an ARF part."""
    return (b"From: ruf@receiver.example\nSubject: DMARC Failure Report for example.com\n"
            b"MIME-Version: 1.0\nContent-Type: multipart/report; report-type=feedback-report;"
            b" boundary=b1\n\n--b1\nContent-Type: text/plain\n\nA failure report.\n"
            b"--b1\nContent-Type: message/feedback-report\n\nFeedback-Type: auth-failure\n"
            b"Auth-Failure: dmarc\n\n--b1--\n")


__all__ = ["gzipped", "policy", "report", "report_bytes", "kinds", "mail", "base64_twice",
           "failure_report_mail"]
