"""The usual <record>, read by its shape: the element layout is checked once, values by position.

Only a record in the standard vocabulary with every value already in its standard spelling is
read here; anything else (a foreign or unknown element, a repeated or missing field, a spelling
that earns a warning, an error) returns None, and the caller reads the record through
xml_fields.record_from, which raises or warns as it does for any record. The one warning read
here is an empty optional value in <auth_results> or <identifiers> (common in real reports): it
is noted only once the record is read, in the order record_from notes it.

A report repeats a handful of layouts thousands of times, so each layout (tags in document order
and child counts) is turned once into a _Plan of positions; a record then costs three C-level
passes over its elements and a few look-ups, not a Python step per element. What it buys: most
of the parse time of a large report (bench/ingest.py --against). What it costs: a second
statement of record_from's rules, kept equal by tests/ingest/test_xml_quick_records.py (every
corpus file and every tolerated departure, read both ways); a rule changed in one is changed here.
"""
from __future__ import annotations

import functools
import ipaddress
from operator import attrgetter, itemgetter

from ingest import xml_values as values
from ingest.model import ParsedRecord

MAX_SHAPES = 256        # layouts remembered per document: a hostile one cannot grow memory
MISSING = -1            # the position of an omitted element, whose text reads as ""
_TAG, _TEXT = attrgetter("tag"), attrgetter("text")


class QuickRecords:
    """Reads records of one document whose namespaces are `namespaces` (a set that may grow)."""

    def __init__(self, namespaces: set[str], note, max_auth_results: int):
        self.namespaces = namespaces
        self.note = note
        self.max_auth_results = max_auth_results
        self._plans: dict[tuple, _Plan | None] = {}
        self._last_shape, self._last_plan = None, None

    def local(self, tag) -> str | None:
        """The local name of an element in a known namespace; None for anything else."""
        if not isinstance(tag, str):
            return None
        if tag[0] != "{":
            return tag
        namespace, _, local = tag[1:].partition("}")
        return local if namespace in self.namespaces else None

    def read(self, element) -> ParsedRecord | None:
        """The record, or None when it needs the careful path."""
        elements = list(element.iter())
        shape = (tuple(map(_TAG, elements)), tuple(map(len, elements)))
        if shape == self._last_shape:       # the usual case: cheaper than hashing new strings
            plan = self._last_plan
        else:
            plan = self._plans.get(shape, False)
            if plan is False:
                plan = _planned(elements, self.local)
                if len(self._plans) < MAX_SHAPES:
                    self._plans[shape] = plan
            self._last_shape, self._last_plan = shape, plan
        if plan is None or plan.auth_results > self.max_auth_results:
            return None             # the careful path refuses it, naming the record
        texts = [text.strip() if text else "" for text in map(_TEXT, plan.leaves(elements))]
        texts.append("")            # texts[MISSING]
        return plan.read(texts, self.note)


class _Plan:
    """Positions (among the record's leaf elements, in document order) of every value of one
    layout; leaves picks those leaves out of all the record's elements."""

    def __init__(self, leaves, row, reasons, identifiers, dkim, spf, empties):
        self.leaves = leaves
        self.source_ip, self.count, self.disposition, self.dkim, self.spf = row
        self.reasons = reasons              # (type, comment) positions per <reason>
        self.header_from, self.envelope_to, self.envelope_from = identifiers
        self.auth_dkim = dkim               # (domain, selector, result, human_result) per <dkim>
        self.auth_spf = spf                 # (domain, scope, result, human_result) per <spf>
        self.auth_results = len(dkim) + len(spf)
        self.empties = empties              # (key, warning, position), in record_from's order

    def read(self, t: list[str], note) -> ParsedRecord | None:
        source_ip, count = t[self.source_ip], t[self.count]
        if not source_ip or not _is_ip(source_ip) or not count:
            return None
        try:
            count = int(count)
        except ValueError:
            return None
        disposition, dkim, spf = t[self.disposition], t[self.dkim], t[self.spf]
        if (count < 0 or disposition not in values.DISPOSITIONS or dkim not in values.VERDICTS
                or spf not in values.VERDICTS):
            return None
        header_from = t[self.header_from]
        if not header_from:
            return None
        reasons = None
        if self.reasons:
            reasons = []
            for kind_at, comment_at in self.reasons:
                kind, comment = t[kind_at], t[comment_at]
                if kind:
                    if kind not in values.REASON_TYPES:
                        return None
                elif kind_at != MISSING or not comment:
                    return None     # an empty <type>, or an empty <reason>: both warn
                reasons.append({"Type": kind, "Comment": comment})
        auth_dkim = auth_spf = None
        if self.auth_dkim:
            auth_dkim = []
            for d, s, r, h in self.auth_dkim:
                result = t[r]
                if result not in _DKIM_RESULTS:
                    return None
                auth_dkim.append({"Domain": t[d], "Selector": t[s], "Result": result,
                                  "HumanResult": t[h]})
        if self.auth_spf:
            auth_spf = []
            for d, s, r, h in self.auth_spf:
                scope, result = t[s], t[r]
                if result not in _SPF_RESULTS or scope not in _SPF_SCOPES:
                    return None
                auth_spf.append({"Domain": t[d], "Scope": scope, "Result": result,
                                 "HumanResult": t[h]})
        for key, warning, at in self.empties:
            if not t[at]:
                note(key, warning)
        return ParsedRecord(source_ip, count, disposition, dkim, spf, reasons, t[self.envelope_to],
                            t[self.envelope_from], header_from, auth_dkim, auth_spf)


def _planned(elements: list, local) -> _Plan | None:
    """The plan of a record's layout, or None when the layout needs the careful path."""
    leaves = [index for index, element in enumerate(elements) if not len(element)]
    if len(leaves) < 2:
        return None                     # never a whole record (and itemgetter needs two)
    at = {id(elements[index]): position for position, index in enumerate(leaves)}
    record = _children(elements[0], ("row", "identifiers", "auth_results"), local)
    if record is None or "row" not in record or "identifiers" not in record:
        return None
    row = _children(record["row"], ("source_ip", "count", "policy_evaluated"), local)
    if row is None or len(row) != 3 or len(row["source_ip"]) or len(row["count"]):
        return None
    verdicts, reasons = {}, []
    for child in row["policy_evaluated"]:
        name = local(child.tag)
        if name == "reason":
            reason = _leaves(child, _REASON_FIELDS, at, local)
            if reason is None:
                return None
            reasons.append((reason.get("type", MISSING), reason.get("comment", MISSING)))
        elif name in _VERDICT_FIELDS and name not in verdicts and not len(child):
            verdicts[name] = at[id(child)]
        else:
            return None
    identifiers = _leaves(record["identifiers"], _IDENTIFIER_FIELDS, at, local)
    if len(verdicts) != 3 or identifiers is None or "header_from" not in identifiers:
        return None
    dkim, spf, empties = [], [], []
    for child in record.get("auth_results", ()):
        name = local(child.tag)
        if name == "dkim" and not spf:      # <dkim> after <spf> warns: the careful path's
            fields = _leaves(child, _DKIM_FIELDS, at, local)
            dkim.append(fields)
        elif name == "spf":
            fields = _leaves(child, _SPF_FIELDS, at, local)
            spf.append(fields)
        else:
            return None
        if fields is None:
            return None
        empties += _empties(f"<{name}>", fields)
    empties += _empties("<identifiers>", identifiers)
    return _Plan(
        itemgetter(*leaves),
        [at[id(row["source_ip"])], at[id(row["count"])]] + [verdicts[n] for n in _VERDICT_FIELDS],
        tuple(reasons), [identifiers.get(name, MISSING) for name in _IDENTIFIER_FIELDS],
        tuple(tuple(f.get(name, MISSING) for name in _DKIM_FIELDS) for f in dkim),
        tuple(tuple(f.get(name, MISSING) for name in _SPF_FIELDS) for f in spf), tuple(empties))


def _children(parent, names: tuple[str, ...], local) -> dict | None:
    """parent's children by name, each one of names at most once; None otherwise."""
    found = {}
    for child in parent:
        name = local(child.tag)
        if name not in names or name in found:
            return None
        found[name] = child
    return found


def _leaves(parent, allowed: dict[str, bool], at: dict, local) -> dict[str, int] | None:
    """Positions of parent's children, each a leaf named in allowed at most once; else None."""
    found = {}
    for child in parent:
        name = local(child.tag)
        if name not in allowed or name in found or len(child):
            return None
        found[name] = at[id(child)]
    return found


def _empties(where: str, found: dict[str, int]) -> list[tuple[str, str, int]]:
    """The warnings an empty value of these fields earns, in record_from's order."""
    allowed = _WARNS_EMPTY[where]
    return [(f"empty:{where}:{name}", f"{where} has an empty <{name}>", found[name])
            for name in allowed if name in found]


@functools.lru_cache(maxsize=8192)
def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# name -> whether an empty value is taken without a warning, in the order record_from reads them
_IDENTIFIER_FIELDS = {"header_from": False, "envelope_to": False, "envelope_from": True}
_REASON_FIELDS = {"type": False, "comment": True}
_DKIM_FIELDS = {"domain": False, "selector": False, "result": False, "human_result": True}
_SPF_FIELDS = {"domain": False, "scope": False, "result": False, "human_result": True}
_WARNS_EMPTY = {f"<{where}>": [name for name, silent in fields.items() if not silent]
                for where, fields in (("identifiers", _IDENTIFIER_FIELDS), ("dkim", _DKIM_FIELDS),
                                      ("spf", _SPF_FIELDS))}
_VERDICT_FIELDS = {"disposition": values.DISPOSITIONS, "dkim": values.VERDICTS,
                   "spf": values.VERDICTS}
# "" stands for an omitted element, which the careful path also reads as ""
_DKIM_RESULTS = values.DKIM_RESULTS | {""}
_SPF_RESULTS = values.SPF_RESULTS | {""}
_SPF_SCOPES = values.SPF_SCOPES | {""}
