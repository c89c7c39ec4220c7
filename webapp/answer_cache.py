"""Answers remembered per process until the organization's reports change.

What it buys: /statistics, /top-sources, /domains and the report list's totals sum an
organization's rollups, which takes far longer than answering from memory (bench/mechanisms.py,
"answer_cache"); a page of /sources reads its sources and each one's domains, and a page of
/reports 50 reports' rows, each well over the CPU of a request answered from memory
(docs/performance.md). What it costs to keep correct: every change to what they sum must move
the organization's report version (store.queries.report_version): storing a DMARC report and
taking one out (store/events.reports_changed) move it.
"""
from __future__ import annotations

import threading

from flask import current_app, g

from store import queries

# Entries each process keeps per cache: totals and short lists, and pages of JSON (tens of KB
# each), kept apart so a few thousand pages cannot hold hundreds of MB.
SIZES = {"answers": 4096, "pages": 256}


class AnswerCache:
    """Values keyed by request shape, valid while the org's report version holds.

    The version is read before the value is computed, so a report stored in between can only make
    the remembered value newer than its version, never older.
    """

    def __init__(self, size: int = SIZES["answers"]):
        self.size = size
        self._values: dict = {}
        self._lock = threading.Lock()

    def get(self, key, version, compute):
        """The value for key at this version, computing it (compute()) when it is not kept."""
        entry = self._values.get(key)
        if entry is not None and entry[0] == version:
            return entry[1]
        value = compute()
        with self._lock:
            if len(self._values) >= self.size:
                self._values.clear()
            self._values[key] = (version, value)
        return value


def remember(key, org_id: str, compute, version: int | None = None, kept: str = "answers"):
    """compute() for this org and key, reused by later requests until its reports change;
    version: the org's report version, when the caller read it with something else; kept: the
    cache it is kept in (SIZES)."""
    name = f"rua.answer_cache.{kept}"
    cache = current_app.extensions.get(name)
    if cache is None:
        cache = current_app.extensions.setdefault(name, AnswerCache(SIZES[kept]))
    if version is None:
        version = report_version(org_id)
    return cache.get((org_id, key), version, compute)


def report_version(org_id: str) -> int:
    """The org's report version, read once per request."""
    value = g.get("rua_report_version")
    if value is None:
        value = g.rua_report_version = queries.report_version(org_id)
    return value
