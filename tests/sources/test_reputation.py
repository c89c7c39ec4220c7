"""abuse_status and the blocklist object from DNSBL outcomes: each rule of the docstring."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from sources.dnsbl import ERROR, LISTED, NOT_LISTED, UNKNOWN, ZoneAnswer
from sources.reputation import abuse_status, blocklist, reputation
from store.clock import rfc3339

NOW = datetime(2026, 11, 25, 4, 30, 15, 123456, tzinfo=timezone.utc)


def seen(zone: str, state: str, *codes: str) -> ZoneAnswer:
    return ZoneAnswer(zone, state, codes or (("127.0.0.2",) if state == LISTED else ()))


@pytest.mark.parametrize("outcomes, status", [
    ([seen("bl.spamcop.net", LISTED), seen("psbl.surriel.com", LISTED)], "malicious"),
    ([seen("zen.spamhaus.org", LISTED, "127.0.0.4")], "malicious"),            # XBL: exploited
    ([seen("zen.spamhaus.org", LISTED, "127.0.0.2")], "malicious"),            # SBL
    ([seen("dnsbl.dronebl.org", LISTED, "127.0.0.3")], "malicious"),
    ([seen("zen.spamhaus.org", LISTED, "127.0.0.10"), seen("bl.spamcop.net", NOT_LISTED)],
     "suspicious"),                                                            # PBL: policy
    ([seen("bl.spamcop.net", LISTED), seen("psbl.surriel.com", UNKNOWN)], "suspicious"),
    ([seen("bl.spamcop.net", NOT_LISTED), seen("psbl.surriel.com", NOT_LISTED)], "clean"),
    ([seen("bl.spamcop.net", NOT_LISTED), seen("psbl.surriel.com", UNKNOWN)], "unknown"),
    ([seen("bl.spamcop.net", NOT_LISTED), seen("zen.spamhaus.org", ERROR, "127.255.255.254")],
     "unknown"),
    ([], "unknown"),
])
def test_abuse_status_rules(outcomes, status):
    assert abuse_status(outcomes) == status


def test_blocklist_names_the_listing_zones_and_when_it_was_checked():
    outcomes = [seen("psbl.surriel.com", LISTED), seen("bl.spamcop.net", LISTED),
                seen("zen.spamhaus.org", NOT_LISTED)]
    assert blocklist(outcomes, NOW) == {"status": "listed",
                                        "listed_on": ["bl.spamcop.net", "psbl.surriel.com"],
                                        "checked_at": "2026-11-25T04:30:15Z"}
    assert blocklist([seen("bl.spamcop.net", NOT_LISTED)], NOW)["status"] == "clean"


def test_nothing_answered_is_unknown_and_never_checked():
    assert blocklist([], NOW) == {"status": "unknown", "listed_on": [], "checked_at": None}
    assert blocklist([seen("a", UNKNOWN)], NOW)["checked_at"] is None
    assert reputation([], NOW).abuse_status == "unknown"


def test_times_are_rfc_3339_utc_whole_seconds():
    assert rfc3339(datetime(2026, 1, 2, 3, 4, 5, 999999)) == "2026-01-02T03:04:05Z"
