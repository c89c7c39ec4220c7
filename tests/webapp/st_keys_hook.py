"""Schemathesis CLI auth: each request gets the next key of RUA_ST_KEYS in turn.

The abuse limit counts per key; spreading the run over many keys keeps 429s out of its answers.
As an auth provider (not a fixed header) it lets the ignored_auth check send requests without.
"""
from __future__ import annotations

import itertools
import os

import schemathesis

_KEYS = itertools.cycle(os.environ["RUA_ST_KEYS"].split())


@schemathesis.auth(refresh_interval=None)
class RotatingKeys:
    def get(self, case, context):
        return next(_KEYS)

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
