"""The report mail of the soak: demo/'s DMARC and TLS reports, each given one of the provider's
domains and an id of its own, sent as reporters send them and DKIM-signed with keys the soak's
DNS server publishes. What each message should become in /reports is kept beside it."""
from __future__ import annotations

import datetime as dt
import email
import gzip
import json
import random
import re
from dataclasses import dataclass
from email.utils import parseaddr

from demo import reports as dmarc_demo
from demo import tls_reports as tls_demo
from tests.signed_mail import Key, report_message, rsa_key, signed

DOMAINS_PER_ORG = 25
DAYS = 7                       # the days fed before the feed wraps round to the first
REPORT_ID = re.compile(r"<report_id>([^<]*)</report_id>")


@dataclass(frozen=True)
class Sent:
    """One report as the feeder sends it: where it must show, and with which totals."""
    kind: str                  # "dmarc" or "tls"
    org: str
    domain: str
    report_id: str
    total: int                 # total_messages (DMARC) or sessions (TLS, successful + failed)
    raw: bytes


def organizations(count: int, domains: int = DOMAINS_PER_ORG) -> list[tuple[str, list[str]]]:
    return [(f"org{o}", [f"d{d}.org{o}.example" for d in range(domains)]) for o in range(count)]


class Mailer:
    """Builds the soak's messages in feed order, signed with one key per reporter's domain."""

    def __init__(self, orgs, end: dt.date, seed: int = 7):
        self.orgs = orgs
        self.rng = random.Random(seed)
        self.dmarc = {}                                   # day -> site -> [DemoReport]
        for report in dmarc_demo.generate(seed=seed, days=DAYS, end=end):
            self.dmarc.setdefault(report.day, {}).setdefault(report.domain, []).append(report)
        self.tls = list(tls_demo.generate(seed=seed, days=DAYS, end=end))
        senders = {r.email.split("@")[1] for r in dmarc_demo.REPORTERS}
        senders |= {contact.split("@")[1] for _, contact, *_ in tls_demo.REPORTERS}
        self.keys: dict[str, Key] = {domain: rsa_key(domain, "soak", 2048) for domain in senders}

    def zones(self) -> dict[str, str]:
        """origin -> zone text publishing every signing key."""
        return {domain: key.zone_line() for domain, key in self.keys.items()}

    def feed(self):
        """Sent reports without end: every domain's reports of a day, days going back, then
        round again with the ids made new."""
        round_number = 0
        while True:
            for day in sorted(self.dmarc, reverse=True):
                domains = [(org, d) for org, names in self.orgs for d in names]
                self.rng.shuffle(domains)
                for number, (org, domain) in enumerate(domains):
                    yield from self._dmarc(day, org, domain, number, round_number)
                    if number % 5 == 0:
                        yield self._tls(day, org, domain, round_number)
            round_number += 1

    def _dmarc(self, day, org, domain, number, round_number):
        sites = sorted(self.dmarc[day])
        site = sites[number % len(sites)]
        for report in self.dmarc[day][site]:
            xml = report.xml.replace(site, domain)
            original = REPORT_ID.search(xml).group(1)
            report_id = f"{original}.{domain}.r{round_number}"
            xml = xml.replace(f"<report_id>{original}</report_id>",
                              f"<report_id>{report_id}</report_id>")
            sender = report.reporter.email
            message = report_message(sender, attachment=gzip.compress(xml.encode(), mtime=0),
                                     content_type="application/gzip",
                                     name=f"{report.reporter.host}!{domain}!{report_id}.xml.gz",
                                     subject=f"Report domain: {domain} Report-ID: {report_id}")
            raw = self._sign(sender, message)
            yield Sent("dmarc", org, domain, report_id, report.messages, raw)

    def _tls(self, day, org, domain, round_number) -> Sent:
        name, data = self.tls[(day.toordinal() * 2) % len(self.tls)]
        body = json.loads(gzip.decompress(data) if name.endswith(".gz") else data)
        policy = body["policies"][0]
        policy["policy"]["policy-domain"] = domain
        body["policies"] = [policy]
        body["report-id"] = f"{body['report-id']}.{domain}.{day}.r{round_number}"
        summary = policy["summary"]
        total = summary["total-successful-session-count"] + summary["total-failure-session-count"]
        sender = body["contact-info"]
        message = report_message(sender, attachment=gzip.compress(json.dumps(body).encode(),
                                                                   mtime=0),
                                 content_type="application/tlsrpt+gzip",
                                 name=f"{sender.split('@')[1]}!{domain}!{day}.json.gz",
                                 subject=f"Report Domain: {domain} Submitter: {sender}")
        return Sent("tls", org, domain, body["report-id"], total, self._sign(sender, message))

    def _sign(self, sender: str, message: bytes) -> bytes:
        return signed(message, self.keys[sender.split("@")[1]])


def conflicting_copy(sent: Sent, mailer: Mailer) -> bytes:
    """The same report (same reporter, id, domain, window) with its first record's count one
    higher, signed again: the store keeps it aside as a conflicting copy."""
    message = email.message_from_bytes(sent.raw)
    for part in message.walk():
        if part.get_filename():
            xml = gzip.decompress(part.get_payload(decode=True)).decode()
            changed = re.sub(r"<count>(\d+)</count>", lambda m: f"<count>{int(m.group(1)) + 1}"
                             "</count>", xml, count=1)
            attachment = gzip.compress(changed.encode(), mtime=0)
            sender = parseaddr(message["From"])[1]
            fresh = report_message(sender, attachment=attachment, content_type="application/gzip",
                                   name=part.get_filename(), subject=message["Subject"])
            return mailer._sign(sender, fresh)
    raise ValueError("no attachment")
