"""The usual <record>, read straight off its element: one flat pass per level, no Section tree.

Only a record in the standard vocabulary with every value already in its standard spelling is
read here; anything else (a foreign or unknown element, a repeated or missing field, a spelling
that earns a warning, an error) returns None, and the caller reads the record through
xml_fields.record_from, which raises or warns exactly as before. The one warning read here is an
empty optional value in <auth_results> or <identifiers> (common in real reports): it is noted
only once the record is read, in the order record_from notes it.
"""
from __future__ import annotations

import functools
import ipaddress

from ingest import xml_values as values
from ingest.model import ParsedRecord

_ROW, _IDENTIFIERS, _AUTH = "row", "identifiers", "auth_results"


class QuickRecords:
    """Reads records of one document whose namespaces are `namespaces` (a set that may grow)."""

    def __init__(self, namespaces: set[str], note):
        self.namespaces = namespaces
        self.note = note
        self._locals: dict[str, str] = {}
        self._empty: list[tuple[str, str]] = []   # (where, name) noted once the record is read

    def local(self, tag) -> str | None:
        """The local name of an element in a known namespace; None for anything else."""
        name = None
        if isinstance(tag, str):
            if tag[0] != "{":
                name = tag
            else:
                namespace, _, local = tag[1:].partition("}")
                if namespace not in self.namespaces:
                    return None
                name = local
            self._locals[tag] = name
        return name

    def read(self, element) -> ParsedRecord | None:
        """The record, or None when it needs the careful path."""
        known, local = self._locals.get, self.local
        self._empty.clear()
        row = identifiers = auth = None
        for child in element:
            tag = child.tag
            name = known(tag) or local(tag)
            if name == _ROW and row is None:
                row = child
            elif name == _IDENTIFIERS and identifiers is None:
                identifiers = child
            elif name == _AUTH and auth is None:
                auth = child
            else:
                return None
        if row is None or identifiers is None:
            return None
        got = self._row(row)
        if got is None:
            return None
        source_ip, count, disposition, dkim, spf, reasons = got
        auth_dkim = auth_spf = None
        if auth is not None:
            results = self._auth(auth)
            if results is None:
                return None
            auth_dkim, auth_spf = results
        got = self._leaves(identifiers, _IDENTIFIER_FIELDS, "<identifiers>")
        if got is None or not got.get("header_from"):
            return None
        for where, name in self._empty:
            self.note(f"empty:{where}:{name}", f"{where} has an empty <{name}>")
        return ParsedRecord(
            source_ip=source_ip, count=count, disposition=disposition, dkim=dkim, spf=spf,
            reasons=reasons, envelope_to=got.get("envelope_to", ""),
            envelope_from=got.get("envelope_from", ""), header_from=got["header_from"],
            auth_dkim=auth_dkim, auth_spf=auth_spf)

    def _row(self, row):
        known, local = self._locals.get, self.local
        source_ip = count = evaluated = None
        for child in row:
            tag = child.tag
            name = known(tag) or local(tag)
            if name == "source_ip" and source_ip is None:
                source_ip = _leaf(child)
                if not source_ip or not _is_ip(source_ip):
                    return None
            elif name == "count" and count is None:
                text = _leaf(child)
                if not text:
                    return None
                try:
                    count = int(text)
                except ValueError:
                    return None
                if count < 0:
                    return None
            elif name == "policy_evaluated" and evaluated is None:
                evaluated = child
            else:
                return None
        if source_ip is None or count is None or evaluated is None:
            return None
        got = self._evaluated(evaluated)
        return None if got is None else (source_ip, count, *got)

    def _evaluated(self, evaluated):
        known, local = self._locals.get, self.local
        found = {}
        reasons = []
        for child in evaluated:
            tag = child.tag
            name = known(tag) or local(tag)
            if name == "reason":
                reason = self._leaves(child, _REASON_FIELDS, None)
                if reason is None:
                    return None
                kind = reason.get("type", "")
                if kind and kind not in values.REASON_TYPES:
                    return None
                comment = reason.get("comment", "")
                if not kind and not comment:
                    return None
                reasons.append({"Type": kind, "Comment": comment})
            elif name in _VERDICT_FIELDS and name not in found:
                text = _leaf(child)
                if text not in _VERDICT_FIELDS[name]:
                    return None
                found[name] = text
            else:
                return None
        if len(found) != 3:
            return None
        return found["disposition"], found["dkim"], found["spf"], reasons or None

    def _auth(self, auth):
        known, local = self._locals.get, self.local
        dkim, spf = [], []
        for child in auth:
            # record_from notes every <dkim>'s empties before any <spf>'s, as listed here
            tag = child.tag
            name = known(tag) or local(tag)
            if name == "dkim" and not spf:
                got = self._leaves(child, _DKIM_FIELDS, "<dkim>")
                if got is None or got.get("result", "") not in _DKIM_RESULTS:
                    return None
                dkim.append({"Domain": got.get("domain", ""), "Selector": got.get("selector", ""),
                             "Result": got.get("result", ""),
                             "HumanResult": got.get("human_result", "")})
            elif name == "spf":
                got = self._leaves(child, _SPF_FIELDS, "<spf>")
                if (got is None or got.get("result", "") not in _SPF_RESULTS
                        or got.get("scope", "") not in _SPF_SCOPES):
                    return None
                spf.append({"Domain": got.get("domain", ""), "Scope": got.get("scope", ""),
                            "Result": got.get("result", ""),
                            "HumanResult": got.get("human_result", "")})
            else:
                return None     # an unknown child, or <dkim> after <spf> (a warning)
        return dkim or None, spf or None

    def _leaves(self, parent, allowed: dict[str, bool], where: str | None) -> dict[str, str] | None:
        """Texts of parent's leaf children, each named in allowed once.

        allowed maps a name to whether an empty value is taken silently; an empty value that
        warns is queued (in allowed's order, record_from's) when `where` names the parent for
        the warning, else the careful path takes the record.
        """
        known, local = self._locals.get, self.local
        found = {}
        empty = False
        for child in parent:
            tag = child.tag
            name = known(tag) or local(tag)
            silent = allowed.get(name)
            if silent is None or name in found or len(child):
                return None
            text = child.text
            text = text.strip() if text else ""
            if not text and not silent:
                if where is None:
                    return None
                empty = True
            found[name] = text
        if empty:
            self._empty.extend((where, name) for name, silent in allowed.items()
                               if not silent and found.get(name) == "")
        return found


def _leaf(element) -> str | None:
    """The stripped text of an element without children; None when it has any."""
    if len(element):
        return None
    text = element.text
    return text.strip() if text else ""


@functools.lru_cache(maxsize=8192)
def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# name -> whether an empty value is taken without a warning, in the order record_from reads them
_IDENTIFIER_FIELDS = {"header_from": False, "envelope_to": False, "envelope_from": False}
_REASON_FIELDS = {"type": False, "comment": True}
_DKIM_FIELDS = {"domain": False, "selector": False, "result": False, "human_result": True}
_SPF_FIELDS = {"domain": False, "scope": False, "result": False, "human_result": True}
_VERDICT_FIELDS = {"disposition": values.DISPOSITIONS, "dkim": values.VERDICTS,
                   "spf": values.VERDICTS}
# "" stands for an omitted element, which the careful path also reads as ""
_DKIM_RESULTS = values.DKIM_RESULTS | {""}
_SPF_RESULTS = values.SPF_RESULTS | {""}
_SPF_SCOPES = values.SPF_SCOPES | {""}
