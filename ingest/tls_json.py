"""A TLS report's JSON read under its caps, and the compact text kept of it.

The values are counted (commas and brackets) before anything is parsed, and the parser's hooks
count policies, failure details and result types and refuse numbers the store and the API cannot
hold as each object is built, so memory stays bounded by the caps, not by what a list repeats.
"""
from __future__ import annotations

import json
import math
import re

from ingest.caps import Caps
from ingest.model import ReportError

# 2**63: the first integer a 64-bit column (and the API's JSON encoder, orjson) cannot hold.
LARGEST = 1 << 63
# A NUL written in a string: an odd number of backslashes before u0000 in the compact text.
_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
_POLICY_KEYS = ("policy", "summary", "failure-details")


def loads(data: bytes, caps: Caps) -> tuple[dict, str]:
    """(the document, the text to keep), or ReportError naming what cannot be kept."""
    values = data.count(b",") + data.count(b"[") + data.count(b"{")
    if values > caps.tls_values:
        raise caps.exceeded("tls_values", "JSON values")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ReportError("not UTF-8 text") from None
    hooks = _Hooks(caps)
    try:
        document = json.loads(text, object_pairs_hook=hooks.object, parse_int=_integer,
                              parse_float=_decimal, parse_constant=_constant)
    except ReportError:
        raise
    except (ValueError, RecursionError) as exc:
        raise ReportError(f"not valid JSON ({str(exc)[:120]})") from None
    return document, _kept(document, text)


def _kept(document, text: str) -> str:
    """The document's compact text (whitespace padding is not stored), or the text as received
    when that is shorter; refused when it holds what no column can: a NUL or a lone surrogate."""
    compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    try:
        compact.encode("utf-8")
    except UnicodeEncodeError:
        raise ReportError("a string holds a lone surrogate (such as \\ud800), "
                          "which is no character") from None
    if _NUL.search(compact):
        raise ReportError("a string holds a NUL character (\\u0000)")
    return compact if len(compact) <= len(text) else text


def result_type(detail: dict) -> str:
    """A failure detail's result type as it is summed: lower-case text, "" when missing."""
    return str(detail.get("result-type") or "").strip().lower()


class _Hooks:
    """Counts what the parser builds, and refuses past a cap before the next object is built."""

    def __init__(self, caps: Caps):
        self.caps = caps
        self.policies = 0
        self.result_types: set[str] = set()

    def object(self, pairs: list) -> dict:
        found = dict(pairs)
        if "result-type" in found:
            self.result_types.add(result_type(found))
            if len(self.result_types) > self.caps.result_types:
                raise self.caps.exceeded("result_types", "distinct result types")
        if any(key in found for key in _POLICY_KEYS):
            self.policies += 1
            if self.policies > self.caps.tls_policies:
                raise self.caps.exceeded("tls_policies", "policies")
            self._at_most(found, "failure-details", "failure_details",
                          "failure details in one policy")
        self._at_most(found, "mx-host", "mx_hosts", "mx-host entries in one policy")
        self._at_most(found, "policy-string", "policy_strings",
                      "policy-string entries in one policy")
        return found

    def _at_most(self, found: dict, key: str, cap: str, what: str) -> None:
        value = found.get(key)
        if isinstance(value, list) and len(value) > getattr(self.caps, cap):
            raise self.caps.exceeded(cap, what)


def _integer(text: str) -> int:
    if len(text) > 20 or not -LARGEST <= int(text) < LARGEST:
        raise ReportError(f"the number {text[:40]} is too large for a 64-bit integer")
    return int(text)


def _decimal(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ReportError(f"the number {text[:40]} is too large for a 64-bit float")
    return number


def _constant(name: str):
    raise ReportError(f"{name} is not a number JSON allows (RFC 8259)")
