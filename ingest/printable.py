"""Names from strangers (file names, zip members, reports' fields) made safe to print."""
from __future__ import annotations

import re

# Controls (C0, DEL, C1), bidirectional and zero-width marks, line separators, a BOM, and lone
# surrogates (bytes of a name that is not UTF-8): anything a terminal acts on or hides.
# Names from strangers are cut to this many characters wherever they are printed or logged.
NAME_LIMIT = 200
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f"
                     "\ufeff\ud800-\udfff]")


def printable(text: str) -> str:
    """text with every unsafe character escaped as \\xNN or \\uNNNN (a byte that was not UTF-8
    as \\xNN), so what is printed is what the name holds, and nothing acts on the terminal."""
    return _UNSAFE.sub(_escape, text)


def bounded(text: str, limit: int = NAME_LIMIT) -> str:
    """text cut to limit characters, the cut marked with how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit:,} more characters]"


def report_named(org_name: str, report_id: str) -> str:
    """A report as lines and event titles name it, "<reporter> report <id>"; a report whose
    reporter name is empty says so instead of printing "( report …"."""
    if org_name.strip():
        return f"{bounded(org_name)} report {bounded(report_id)}"
    return f"report {bounded(report_id)} of an unnamed reporter"


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:        # os.fsdecode's stand-in for an undecodable byte
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
