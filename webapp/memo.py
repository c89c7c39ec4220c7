"""Answers remembered per process until the organization's reports change.

What it buys: /statistics, /top-sources, /domains and the report list's totals sum an
organization's rollups, which takes far longer than answering from memory (bench/mechanisms.py,
"memo"). What it costs to keep correct: every change to what they sum must move the
organization's report stamp (store.queries.report_stamp), which holds while reports are only
ever added.
"""
from __future__ import annotations

import threading

from flask import current_app, g

from store.queries import report_stamp

SIZE = 4096


class Memo:
    """Values keyed by request shape, valid while the org's stamp (queries.report_stamp) holds.

    The stamp is read before the value is computed, so a report stored in between can only make
    the remembered value newer than its stamp, never older.
    """

    def __init__(self, size: int = SIZE):
        self.size = size
        self._values: dict = {}
        self._lock = threading.Lock()

    def get(self, key, stamp, compute):
        """The value for key at this stamp, computing it (compute()) when it is not kept."""
        entry = self._values.get(key)
        if entry is not None and entry[0] == stamp:
            return entry[1]
        value = compute()
        with self._lock:
            if len(self._values) >= self.size:
                self._values.clear()
            self._values[key] = (stamp, value)
        return value


def remember(key, org_id: str, compute):
    """compute() for this org and key, reused by later requests until its reports change."""
    memo = current_app.extensions.get("rua.memo")
    if memo is None:
        memo = current_app.extensions.setdefault("rua.memo", Memo())
    return memo.get((org_id, key), stamp(org_id), compute)


def stamp(org_id: str) -> int:
    """The org's report stamp, read once per request."""
    value = g.get("rua_stamp")
    if value is None:
        value = g.rua_stamp = report_stamp(org_id)
    return value
