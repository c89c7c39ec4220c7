"""Enumerated report values: the spellings real reporters use, mapped to the standard ones."""
from __future__ import annotations

from ingest.model import Note

DISPOSITIONS = {"none", "quarantine", "reject"}
VERDICTS = {"pass", "fail"}
POLICIES = {"none", "quarantine", "reject"}
ALIGNMENT_MODES = {"r", "s"}
FLAGS = {"y", "n"}
PSD_FLAGS = {"y", "n", "u"}
DISCOVERY = {"psl", "treewalk"}
DKIM_RESULTS = {"none", "pass", "fail", "policy", "neutral", "temperror", "permerror"}
SPF_RESULTS = {"none", "neutral", "pass", "fail", "softfail", "temperror", "permerror"}
SPF_SCOPES = {"mfrom", "helo"}
REASONS = {"forwarded": "trusted_forwarder", "sampled_out": "other"}
REASON_TYPES = {"local_policy", "mailing_list", "other", "policy_test_mode", "trusted_forwarder"}

# Old or loose spellings whose meaning is plain.
_SYNONYMS = {
    "disposition": {"pass": "none"},
    "verdict": {"hardfail": "fail", "softfail": "fail", "neutral": "fail", "none": "fail",
                "temperror": "fail", "permerror": "fail", "policy": "fail"},
    "result": {"hardfail": "fail"},
    "mode": {"relaxed": "r", "strict": "s"},
    "flag": {"yes": "y", "no": "n", "true": "y", "false": "n", "1": "y", "0": "n"},
    "scope": {"mailfrom": "mfrom"},
}


def enum(value: str, allowed: set[str], *, field: str, kind: str, note: Note) -> str:
    """value in its standard spelling; case and known synonyms are fixed with a warning."""
    if value == "":
        return ""
    lowered = value.strip().lower()
    if lowered != value:
        note(f"case:{field}", f"<{field}> value {value!r} was read as {lowered!r}")
    if lowered in allowed:
        return lowered
    mapped = _SYNONYMS.get(kind, {}).get(lowered)
    if mapped is not None:
        note(f"synonym:{field}:{lowered}", f"<{field}> value {lowered!r} was read as {mapped!r}")
        return mapped
    note(f"unknown:{field}:{lowered}", f"<{field}> has the non-standard value {lowered!r}")
    return lowered


def reason_type(value: str, note: Note) -> str:
    """A reason type in the contract's names; the older 'forwarded' and 'sampled_out' are mapped."""
    lowered = value.strip().lower()
    if lowered in REASONS:
        mapped = REASONS[lowered]
        note(f"reason:{lowered}", f"reason type {lowered!r} (an older name) was read as {mapped!r}")
        return mapped
    return enum(value, REASON_TYPES, field="type", kind="reason", note=note)
