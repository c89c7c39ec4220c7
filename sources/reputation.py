"""A source's reputation from its DNSBL outcomes: abuse_status and the blocklist object (pure).

abuse_status, the first rule that holds:
1. malicious   listed by two or more zones, or by one zone with a code that zone documents as
               a spam operation, a compromised host or a botnet (SEVERE below: Spamhaus SBL
               127.0.0.2, XBL 127.0.0.4-7, DROP 127.0.0.9; any DroneBL listing).
2. suspicious  listed by one zone otherwise (e.g. Spamhaus PBL 127.0.0.10-11: end-user space
               that should not send directly; SpamCop, PSBL or Mailspike listings).
3. clean       every zone usable for the address's family answered and none lists it.
4. unknown     nothing was checked (offline, no usable zone for the family), or a zone could not
               answer: one silent zone is not evidence of a clean address.
An error answer (127.255.255.x, an address outside 127/8) is never a listing.

blocklist: {"status": listed | clean | unknown, "listed_on": [zones], "checked_at": RFC 3339
UTC of the check, or null when no zone answered}.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sources.dnsbl import LISTED, NOT_LISTED, UNKNOWN, ZoneAnswer
from store.clock import rfc3339

MALICIOUS, SUSPICIOUS, CLEAN = "malicious", "suspicious", "clean"
ABUSE_STATUSES = (CLEAN, SUSPICIOUS, MALICIOUS, UNKNOWN)
ANY_CODE = "*"
SEVERE = {
    "zen.spamhaus.org": {"127.0.0.2", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7",
                         "127.0.0.9"},
    "sbl.spamhaus.org": {"127.0.0.2", "127.0.0.9"},
    "xbl.spamhaus.org": {"127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"},
    "dnsbl.dronebl.org": {ANY_CODE},
}


@dataclass(frozen=True)
class Reputation:
    abuse_status: str
    blocklist: dict


def abuse_status(outcomes: list[ZoneAnswer]) -> str:
    listed = [o for o in outcomes if o.state == LISTED]
    if len(listed) >= 2 or any(_severe(o) for o in listed):
        return MALICIOUS
    if listed:
        return SUSPICIOUS
    if outcomes and all(o.state == NOT_LISTED for o in outcomes):
        return CLEAN
    return UNKNOWN


def blocklist(outcomes: list[ZoneAnswer], checked_at: datetime) -> dict:
    listed = sorted(o.zone for o in outcomes if o.state == LISTED)
    answered = any(o.state in (LISTED, NOT_LISTED) for o in outcomes)
    if listed:
        status = "listed"
    elif outcomes and all(o.state == NOT_LISTED for o in outcomes):
        status = CLEAN
    else:
        status = UNKNOWN
    return {"status": status, "listed_on": listed,
            "checked_at": rfc3339(checked_at) if answered else None}


def reputation(outcomes: list[ZoneAnswer], checked_at: datetime) -> Reputation:
    return Reputation(abuse_status(outcomes), blocklist(outcomes, checked_at))



def _severe(listed: ZoneAnswer) -> bool:
    codes = SEVERE.get(listed.zone, ())
    return ANY_CODE in codes or any(code in codes for code in listed.codes)


