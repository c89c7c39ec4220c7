"""Who sends mail as the demo domains, and what a receiver's DMARC check makes of each message.

Service addresses are taken from the ranges those services publish in their SPF records;
forwarders and spoofers use the documentation ranges (RFC 5737 / RFC 3849).
"""
from __future__ import annotations

from dataclasses import dataclass

from demo.report_xml import DmarcRecord, Row
from rules.alignment import aligned

ALIGNED, FORWARDED, UNALIGNED, SPOOFED = "aligned", "forwarded", "unaligned", "spoofed"


@dataclass(frozen=True)
class Stream:
    """One kind of mail carrying the domain in From:, with the signatures it arrives with.

    Templates: {d} is the From domain, {label} the domain with its dots removed.
    """
    name: str
    kind: str
    ips: tuple[str, ...]
    dkim: tuple[tuple[str, str, str], ...]   # (domain, selector, result)
    spf: tuple[str, str, str]                # (domain, scope, result)


GOOGLE_WORKSPACE = Stream(
    "Google Workspace", ALIGNED,
    ("209.85.220.41", "209.85.220.69", "209.85.128.54", "209.85.218.47", "209.85.208.171",
     "2a00:1450:4864:20::52f", "2607:f8b0:4864:20::1036"),
    (("{d}", "google", "pass"),), ("{d}", "mfrom", "pass"))
MICROSOFT_365 = Stream(
    "Microsoft 365", ALIGNED,
    ("40.107.22.70", "40.107.236.81", "40.107.93.112", "52.101.68.104", "52.100.164.231",
     "2a01:111:f403:2613::700", "2a01:111:f403:c200::3"),
    (("{d}", "selector1", "pass"), ("{label}.onmicrosoft.com", "selector1-{label}-onmicrosoft-com", "pass")),
    ("{d}", "mfrom", "pass"))
SENDGRID = Stream(
    "SendGrid", ALIGNED,
    ("167.89.100.12", "167.89.64.53", "149.72.34.116", "149.72.247.52", "168.245.68.173"),
    (("{d}", "s1", "pass"), ("sendgrid.info", "smtpapi", "pass")), ("em4821.{d}", "mfrom", "pass"))
MAILCHIMP = Stream(
    "Mailchimp", ALIGNED,
    ("198.2.179.31", "198.2.139.201", "198.2.186.12", "205.201.132.17", "205.201.139.76"),
    (("{d}", "k1", "pass"), ("mcsv.net", "k2", "pass")), ("mail31.sea91.mcsv.net", "mfrom", "pass"))
GOOGLE_GROUPS = Stream(
    "Google Groups", FORWARDED,
    ("209.85.220.73", "209.85.166.198", "2607:f8b0:4864:20::c3e"),
    (("{d}", "google", "fail"), ("googlegroups.com", "20230601", "pass")),
    ("googlegroups.com", "mfrom", "pass"))
MAILMAN_LIST = Stream(
    "Mailman list server", FORWARDED,
    ("198.51.100.25", "198.51.100.26"),
    (("{d}", "google", "fail"), ("lists.example.edu", "mailman", "pass")),
    ("lists.example.edu", "mfrom", "pass"))
MAILMAN_LIST_365 = Stream(
    "Mailman list server", FORWARDED,
    ("198.51.100.25", "198.51.100.26"),
    (("{d}", "selector1", "fail"), ("lists.example.edu", "mailman", "pass")),
    ("lists.example.edu", "mfrom", "pass"))
OUTLOOK_FORWARDING = Stream(
    "Outlook.com forwarding", FORWARDED,
    ("40.92.18.41", "40.92.66.105", "2a01:111:f400:fe1e::81e"),
    (("{d}", "selector1", "fail"),), ("outlook.com", "mfrom", "pass"))
ZENDESK = Stream(
    "Zendesk", UNALIGNED,
    ("192.161.150.21", "192.161.151.4", "192.161.148.7"),
    (("zendesk.com", "zendesk1", "pass"),), ("zendesk.com", "mfrom", "pass"))
AMAZON_SES = Stream(
    "Amazon SES", UNALIGNED,
    ("54.240.8.34", "54.240.11.156", "54.240.27.9"),
    (("amazonses.com", "224i4yxa5dv7c2xz3womw6peuasteono", "pass"),),
    ("amazonses.com", "mfrom", "pass"))
# Signing for the domain before its CNAMEs are published: the key is not found (permerror).
SENDGRID_UNAUTHENTICATED = Stream(
    "SendGrid", UNALIGNED,
    ("167.89.115.56", "149.72.121.44"),
    (("{d}", "s1", "permerror"), ("sendgrid.net", "smtpapi", "pass")),
    ("sendgrid.net", "mfrom", "pass"))
SPOOFER = Stream("Unknown sender", SPOOFED, (), (), ("{d}", "mfrom", "fail"))

_SPOOF_PREFIXES = ("192.0.2.", "198.51.100.", "203.0.113.")
_LOOKALIKES = ("secure-{label}.com", "{label}-billing.net", "mail-{label}.info")


def spoof_ip(rng) -> str:
    """An address with no business sending for the domain (a quarter of them IPv6)."""
    if rng.random() < 0.25:
        return f"2001:db8:{rng.randrange(1, 0xffff):x}::{rng.randrange(1, 0xffff):x}"
    return f"{rng.choice(_SPOOF_PREFIXES)}{rng.randrange(2, 254)}"


def spoof_signatures(rng, domain: str):
    """What forged mail shows: no DKIM or a look-alike's, and SPF that fails for the domain."""
    label = domain.replace(".", "")
    roll = rng.random()
    if roll < 0.4:
        return (), (domain, "mfrom", "fail")
    if roll < 0.65:
        return (), (domain, "mfrom", "softfail")
    if roll < 0.85:
        fake = rng.choice(_LOOKALIKES).format(label=label)
        return ((fake, "default", "pass"),), (fake, "mfrom", "pass")
    return ((domain, "default", "fail"),), (f"host{rng.randrange(10, 99)}.example.net", "helo", "none")


def _fill(template: str, domain: str) -> str:
    return template.format(d=domain, label=domain.replace(".", ""))


def evaluate(stream: Stream, rng, domain: str, policy: DmarcRecord, ip: str, count: int,
             forward_reason: tuple | None) -> Row:
    """The record a receiver writes for `count` messages of `stream` from `ip`."""
    if stream.kind == SPOOFED:
        dkim, spf = spoof_signatures(rng, domain)
    else:
        dkim = tuple((_fill(d, domain), _fill(s, domain), r) for d, s, r in stream.dkim)
        spf = (_fill(stream.spf[0], domain), stream.spf[1], stream.spf[2])
    dkim_pass = any(r == "pass" and aligned(d, domain, policy.adkim) for d, _, r in dkim)
    spf_pass = spf[2] == "pass" and spf[1] == "mfrom" and aligned(spf[0], domain, policy.aspf)
    reasons = ()
    if dkim_pass or spf_pass:
        disposition = "none"
    elif stream.kind == FORWARDED and forward_reason:
        disposition, reasons = "none", (forward_reason,)
    elif policy.p != "none" and rng.random() * 100 < policy.pct:
        disposition = policy.p
    else:
        disposition = "none"
    return Row(source_ip=ip, count=count, disposition=disposition,
               dkim="pass" if dkim_pass else "fail", spf="pass" if spf_pass else "fail",
               header_from=domain, envelope_from=spf[0] if spf[1] == "mfrom" else domain,
               reasons=reasons, auth_dkim=dkim, auth_spf=(spf,))
