"""Realistic DMARC aggregate reports for the demo and for benchmarks, as real XML text.

`generate` makes one report per reporter, monitored domain and UTC day (days without mail
give no report, as with real reporters); `write_large_report` streams one report of any
number of records to a file. Both are deterministic for a given seed (and end day).
"""
from __future__ import annotations

import datetime as dt
import gzip
import io
import pathlib
import random
import zipfile
from dataclasses import dataclass

from demo import senders as s
from demo.report_xml import (FOOTER, RFC7489, RFC9990, DmarcRecord, ReportHeader, Style,
                             document, head, record)

OFFICE = (1.0, 1.05, 1.0, 1.02, 0.9, 0.25, 0.2)           # Monday first
NEWSLETTER = (0.3, 1.8, 0.4, 1.6, 0.3, 0.1, 0.1)           # campaigns go out Tue and Thu


@dataclass(frozen=True)
class Site:
    """A monitored domain: its daily volume, weekly rhythm, policy and who sends as it."""
    volume: int
    rhythm: tuple
    policy: DmarcRecord
    mix: tuple                                  # ((Stream, share of volume), ...)
    later_policy: DmarcRecord | None = None        # published from two thirds of the period on


DOMAINS = {
    "example.com": Site(1800, OFFICE, DmarcRecord("reject", sp="quarantine", np="reject", fo="1"), (
        (s.GOOGLE_WORKSPACE, .80), (s.SENDGRID, .08), (s.GOOGLE_GROUPS, .03),
        (s.MAILMAN_LIST, .01), (s.OUTLOOK_FORWARDING, .01), (s.ZENDESK, .03), (s.SPOOFER, .04))),
    "example.net": Site(700, OFFICE, DmarcRecord("quarantine", pct=25), (
        (s.MICROSOFT_365, .82), (s.AMAZON_SES, .06), (s.OUTLOOK_FORWARDING, .02),
        (s.MAILMAN_LIST_365, .02), (s.SPOOFER, .08)), DmarcRecord("quarantine", pct=100)),
    "example.org": Site(350, OFFICE, DmarcRecord("none", fo="1"), (
        (s.GOOGLE_WORKSPACE, .55), (s.SENDGRID_UNAUTHENTICATED, .15), (s.AMAZON_SES, .05),
        (s.MAILMAN_LIST, .12), (s.GOOGLE_GROUPS, .05), (s.SPOOFER, .08))),
    "news.example.com": Site(4000, NEWSLETTER, DmarcRecord("quarantine", adkim="s"), (
        (s.MAILCHIMP, .55), (s.SENDGRID, .40), (s.SPOOFER, .05))),
}


@dataclass(frozen=True)
class Reporter:
    """A mailbox provider that sends reports, and the habits its reports show."""
    key: str
    org_name: str
    email: str
    host: str                      # first part of the file name
    share: float                   # share of the domains' recipients it hosts
    style: Style
    compression: str               # zip | gzip | "" (plain .xml)
    inclusive_end: bool            # window ends 23:59:59 rather than at the next midnight
    forward_reason: tuple | None   # the override it names for list traffic
    extra_contact_info: str = ""
    generator: str = ""
    domains: tuple = ()            # where its users get the domains' mail; () for all of them


_MS = Style(declaration='<?xml version="1.0"?>', version=True, envelope_to=True, envelope_from=True,
            fo=True, root_attributes=' xmlns:xsd="http://www.w3.org/2001/XMLSchema"'
                                     ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"')
REPORTERS = (
    Reporter("google", "google.com", "noreply-dmarc-support@google.com", "google.com", .42,
             Style(np=True), "zip", True, ("local_policy", "arc=pass"),
             "https://support.google.com/a/answer/2466580"),
    Reporter("outlook", "Outlook.com", "dmarcreport@microsoft.com", "protection.outlook.com", .12,
             _MS, "gzip", False, None),
    Reporter("enterprise", "Enterprise Outlook", "dmarcreport@microsoft.com",
             "enterprise.protection.outlook.com", .14, _MS, "gzip", False, None,
             domains=("example.com", "example.net")),
    Reporter("yahoo", "Yahoo", "dmarchelp@yahooinc.com", "yahoo.com", .14,
             Style(dialect=RFC9990), "gzip", True, ("mailing_list", ""),
             generator="Yahoo DMARC Aggregate Reporter 2.0"),
    Reporter("mailru", "Mail.Ru", "dmarc_support@corp.mail.ru", "mail.ru", .004,
             Style(declaration="<?xml version='1.0' encoding='utf-8'?>", indent=""), "", False,
             ("mailing_list", ""), "http://help.mail.ru/mail-help",
             domains=("example.org", "news.example.com")),
    Reporter("comcast", "comcast.net", "dmarc-admin@alerts.comcast.net", "comcast.net", .03,
             Style(indent="\t", version=True, envelope_from=True, fo=True), "gzip", False,
             ("local_policy", ""), domains=("example.com", "example.org", "news.example.com")),
    Reporter("fjordnett", "Fjordnett", "noreply-dmarc@fjordnett.example", "fjordnett.example", .003,
             Style(dialect=RFC9990, human_result=True), "", True, ("mailing_list", "list-id"),
             generator="rspamd 3.11.1", domains=("example.net", "example.org")),
)
_ENVELOPE_TO = {"outlook": ("outlook.com", "hotmail.com", "live.com"),
                "enterprise": ("contoso.com", "fabrikam.com", "northwindtraders.com")}


@dataclass
class DemoReport:
    """One generated report: its XML text and how it would arrive (file name, compression)."""
    reporter: Reporter
    domain: str
    day: dt.date
    xml: str
    records: int
    messages: int

    @property
    def filename(self) -> str:
        begin, end = _window(self.reporter, self.day)
        stem = f"{self.reporter.host}!{self.domain}!{begin}!{end}"
        return stem + {"zip": ".zip", "gzip": ".xml.gz", "": ".xml"}[self.reporter.compression]

    def payload(self) -> bytes:
        """The bytes of the file as the reporter attaches it."""
        data = self.xml.encode("utf-8")
        if self.reporter.compression == "gzip":
            return gzip.compress(data, mtime=0)
        if self.reporter.compression == "zip":
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                info = zipfile.ZipInfo(self.filename[:-len(".zip")] + ".xml", self.day.timetuple()[:6])
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)
            return buffer.getvalue()
        return data


def _epoch(day: dt.date) -> int:
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp())


def _window(reporter: Reporter, day: dt.date) -> tuple[int, int]:
    begin = _epoch(day)
    return begin, begin + 86400 - (1 if reporter.inclusive_end else 0)


def _report_id(reporter: Reporter, rng: random.Random, domain: str, end: int) -> str:
    sent = end + rng.randrange(3600, 30000)
    return {
        "google": lambda: str(rng.randrange(10**18, 10**20)),
        "outlook": lambda: f"{rng.getrandbits(128):032x}",
        "enterprise": lambda: f"{rng.getrandbits(128):032x}",
        "yahoo": lambda: f"{sent}.{rng.randrange(10**6):06d}",
        "mailru": lambda: str(rng.randrange(10**28, 10**29)),
        "comcast": lambda: f"v2-{sent}-{domain}",
        "fjordnett": lambda: f"{rng.getrandbits(64):016x}.{sent}@fjordnett.example",
    }[reporter.key]()


def _split(rng: random.Random, expected: float, slots: int) -> list[int]:
    """Whole message counts over `slots` sources adding up to about `expected`."""
    weights = [rng.random() + 0.2 for _ in range(slots)]
    total = sum(weights)
    counts = []
    for weight in weights:
        share = expected * weight / total
        counts.append(int(share) + (1 if rng.random() < share - int(share) else 0))
    return counts


def _rows(rng, site: Site, policy: DmarcRecord, domain: str, reporter: Reporter, scale: float):
    """The records one reporter writes for one domain on one day."""
    rows = []
    for stream, share in site.mix:
        expected = scale * share * rng.lognormvariate(0, 0.25)
        if stream.kind == s.SPOOFED:
            if rng.random() < 0.08:                          # a spoofing campaign that day
                expected *= 8
            ips = [s.spoof_ip(rng) for _ in range(min(12, 1 + int(expected // 15)))]
        else:
            ips = rng.sample(stream.ips, min(len(stream.ips), 1 + int(expected // 40)))
        for ip, count in zip(ips, _split(rng, expected, len(ips))):
            if count:
                row = s.evaluate(stream, rng, domain, policy, ip, count, reporter.forward_reason)
                if reporter.key in _ENVELOPE_TO:
                    row.envelope_to = rng.choice(_ENVELOPE_TO[reporter.key])
                rows.append(row)
    return rows


def _meta(reporter: Reporter, rng, domain: str, policy: DmarcRecord,
          day: dt.date) -> ReportHeader:
    begin, end = _window(reporter, day)
    return ReportHeader(org_name=reporter.org_name, email=reporter.email,
                report_id=_report_id(reporter, rng, domain, end), begin=begin, end=end,
                domain=domain, policy=policy, extra_contact_info=reporter.extra_contact_info,
                generator=reporter.generator)


def generate(seed: int = 0, days: int = 90, end: dt.date | None = None):
    """Yield DemoReports for `days` UTC days up to `end` (default: yesterday, UTC)."""
    rng = random.Random(seed)
    end = end or (dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=1))
    first = end - dt.timedelta(days=days - 1)
    switch = first + dt.timedelta(days=(2 * days) // 3)
    for offset in range(days):
        day = first + dt.timedelta(days=offset)
        for domain, site in DOMAINS.items():
            policy = site.later_policy if site.later_policy and day >= switch else site.policy
            volume = site.volume * site.rhythm[day.weekday()] * rng.lognormvariate(0, 0.15)
            for reporter in REPORTERS:
                if reporter.domains and domain not in reporter.domains:
                    continue
                rows = _rows(rng, site, policy, domain, reporter, volume * reporter.share)
                if not rows:
                    continue
                meta = _meta(reporter, rng, domain, policy, day)
                yield DemoReport(reporter, domain, day, document(reporter.style, meta, rows),
                                 len(rows), sum(r.count for r in rows))


def write_files(reports, directory) -> list[pathlib.Path]:
    """Write each report as the file its reporter would attach; return the paths."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for report in reports:
        path = directory / report.filename
        path.write_bytes(report.payload())
        paths.append(path)
    return paths


def write_large_report(path, records: int, *, seed: int = 0, dialect: str = RFC7489,
                       day: dt.date = dt.date(2026, 1, 15)) -> int:
    """Stream one report of `records` records for example.com to path (.gz: gzip); return messages."""
    rng = random.Random(seed)
    reporter = REPORTERS[0] if dialect == RFC7489 else REPORTERS[-1]
    site = DOMAINS["example.com"]
    streams = [stream for stream, _ in site.mix]
    weights = [share for _, share in site.mix]
    meta = _meta(reporter, rng, "example.com", site.policy, day)
    opener = gzip.open if str(path).endswith(".gz") else open
    messages = 0
    with opener(path, "wt", encoding="utf-8") as out:
        out.write(head(reporter.style, meta))
        for _ in range(records):
            stream = rng.choices(streams, weights)[0]
            if stream.kind == s.SPOOFED:
                ip = s.spoof_ip(rng)
            else:
                ip = rng.choice(stream.ips)
                if ":" not in ip:                      # another host of the same /24
                    ip = f"{ip.rsplit('.', 1)[0]}.{rng.randrange(1, 255)}"
            count = rng.choice((1, 1, 1, 2, 3, 5, 12, 40))
            messages += count
            out.write(record(reporter.style, s.evaluate(stream, rng, "example.com", site.policy,
                                                         ip, count, reporter.forward_reason)))
        out.write(FOOTER)
    return messages
