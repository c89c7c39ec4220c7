"""Realistic SMTP TLS reports (RFC 8460) for the demo, as the JSON files reporters attach.

One report per reporter and UTC day covering the demo domains that publish TLS-RPT; sessions
follow the day's mail volume, and example.net's MX certificate expires for a few days near the
end of the period, as happens when a renewal is missed. Deterministic for a seed and end day.
"""
from __future__ import annotations

import datetime as dt
import gzip
import json
import pathlib
import random

# (org name, contact, file name host, share of the sessions, gzip)
REPORTERS = (("Google Inc.", "smtp-tls-reporting@google.com", "google.com", 0.6, True),
             ("Microsoft Corporation", "tlsrpt-noreply@microsoft.com", "microsoft.com", 0.3, False))
# domain -> (daily sessions, policy type, MX pattern)
DOMAINS = {"example.com": (1500, "sts", "*.mail.example.com"),
           "example.net": (600, "sts", "mx.example.net")}
EXPIRED_DAYS = 3          # example.net's certificate lapses this many days, a week before the end


def generate(seed: int = 0, days: int = 90, end: dt.date | None = None):
    """Yield (file name, bytes) for `days` UTC days up to `end` (default: yesterday, UTC)."""
    rng = random.Random(seed)
    end = end or (dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=1))
    lapse = end - dt.timedelta(days=7)
    for offset in range(days):
        day = end - dt.timedelta(days=days - 1 - offset)
        lapsed = lapse <= day < lapse + dt.timedelta(days=EXPIRED_DAYS)
        for org_name, contact, host, share, zipped in REPORTERS:
            policies = [_policy(rng, domain, share, lapsed and domain == "example.net")
                        for domain in DOMAINS]
            start = day.isoformat() + "T00:00:00Z"
            report = {"organization-name": org_name,
                      "date-range": {"start-datetime": start,
                                     "end-datetime": day.isoformat() + "T23:59:59Z"},
                      "contact-info": contact, "report-id": f"{start}_{host}_{offset}",
                      "policies": policies}
            data = json.dumps(report).encode()
            epoch = int(dt.datetime.combine(day, dt.time(), dt.timezone.utc).timestamp())
            name = f"{host}!demo!{epoch}!{epoch + 86399}.json"
            yield (name + ".gz", gzip.compress(data, mtime=0)) if zipped else (name, data)


def _policy(rng, domain: str, share: float, lapsed: bool) -> dict:
    volume, kind, mx = DOMAINS[domain]
    sessions = int(volume * share * rng.lognormvariate(0, 0.2))
    failed = int(sessions * 0.9) if lapsed else int(sessions * rng.choice((0, 0, 0, 0.002, 0.01)))
    entry = {"policy": {"policy-type": kind, "policy-domain": domain, "mx-host": [mx],
                        "policy-string": ["version: STSv1", "mode: enforce", f"mx: {mx}",
                                          "max_age: 604800"]},
             "summary": {"total-successful-session-count": sessions - failed,
                         "total-failure-session-count": failed}}
    if failed:
        result = "certificate-expired" if lapsed else rng.choice(
            ("starttls-not-supported", "validation-failure"))
        entry["failure-details"] = [{"result-type": result, "sending-mta-ip": "192.0.2.25",
                                     "receiving-mx-hostname": mx.replace("*", "mx1"),
                                     "failed-session-count": failed}]
    return entry


def write_files(reports, directory) -> int:
    """Write each (name, bytes) into directory; how many."""
    directory = pathlib.Path(directory)
    count = 0
    for name, data in reports:
        (directory / name).write_bytes(data)
        count += 1
    return count
