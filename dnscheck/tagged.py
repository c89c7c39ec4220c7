"""Records of `tag=value;` pairs (MTA-STS, TLS-RPT, BIMI): the one record of a kind, its tags."""
from __future__ import annotations

from dnscheck.resolver import Answer
from dnscheck import verdict as v

UNKNOWN, MISSING, MULTIPLE, FOUND = "unknown", "missing", "multiple", "found"


def pick(answer: Answer, version: str) -> tuple[str, tuple[str, ...]]:
    """(outcome, records) of the TXT records that start with `v=<version>`.

    Records of other kinds at the name are ignored, and two or more of this kind count as none
    for receivers (RFC 8461 3.1, RFC 8460 3), so MULTIPLE is its own outcome."""
    if answer.unknown:
        return UNKNOWN, ()
    ours = tuple(r.strip() for r in answer.records if _starts_with(r.strip(), f"v={version}"))
    if not ours:
        return MISSING, ()
    return (MULTIPLE if len(ours) > 1 else FOUND), ours


def _starts_with(record: str, prefix: str) -> bool:
    return record.startswith(prefix) and record[len(prefix):len(prefix) + 1] in ("", ";", " ")


def parse(record: str) -> dict[str, str]:
    """`v=X; a=b` -> {"v": "X", "a": "b"}; ValueError names the first part that is not tag=value."""
    tags: dict[str, str] = {}
    for part in record.split(";"):
        part = part.strip()
        if not part:
            continue
        name, equals, value = part.partition("=")
        name = name.strip().lower()
        if not equals or not name or " " in name:
            raise ValueError(f"'{part}' is not tag=value")
        if name in tags:
            raise ValueError(f"the tag {name}= appears twice")
        tags[name] = value.strip()
    return tags


def article(label: str) -> str:
    """"an" before a label read aloud from a vowel sound (MTA-STS: "em-tee-ay"), else "a"."""
    return "an" if label[0] in "AEFHILMNORSX" and label.split("-")[0].isupper() else "a"


def presence(txt: Answer, version: str, *, name: str, label: str, benefit: str,
             cta: dict, facts: dict | None = None) -> tuple[v.Verdict | None, str]:
    """(the verdict when there is not exactly one record of the kind, else None; the record).

    An optional record: missing is an error (the contract's "missing or malformed") marked
    `absent` in its facts, saying what the record would bring (`benefit`)."""
    outcome, records = pick(txt, version)
    facts = facts or {}
    if outcome == UNKNOWN:
        return v.Verdict(v.UNKNOWN, f"DNS could not tell whether {name} has {article(label)} "
                                    f"{label} record "
                                    f"({txt.why}); the next check will try again.",
                         facts=facts), ""
    if outcome == MISSING:
        return v.Verdict(v.ERROR, f"No {label} record at {name}: {benefit}", hosted_cta=cta,
                         facts={**facts, v.ABSENT: True}), ""
    if outcome == MULTIPLE:
        return v.Verdict(v.ERROR, f"{name} has {len(records)} v={version} records, so "
                                  "receivers ignore them all: keep exactly one.", hosted_cta=cta,
                         facts=facts), ""
    return None, records[0]
