"""From report elements to the seam's dataclasses: which fields are required, what omitted means."""
from __future__ import annotations

import ipaddress

from ingest import xml_values as values
from rules.alignment import aligned
from ingest.caps import epoch_in_range
from ingest.model import Note, ParsedRecord, ReportError, ReportMeta
from store.clock import FIRST_REPORT_EPOCH, from_epoch
from store.domain_names import InvalidDomain, normalize


class Section:
    """An element reduced to plain values, so the tree can be cleared as records stream."""
    __slots__ = ("name", "text", "children", "_index")

    def __init__(self, name: str, text: str = "", children: list["Section"] | None = None):
        self.name = name
        self.text = text
        self.children = children or []
        self._index: dict[str, list[Section]] = {}
        for child in self.children:
            self._index.setdefault(child.name, []).append(child)

    def all(self, name: str) -> list["Section"]:
        return self._index.get(name, [])


class Fields:
    """Reads sections for one document, raising or warning on its behalf."""

    def __init__(self, origin: str, note: Note, namespaces: set[str], max_auth_results: int):
        self.origin = origin
        self.note = note
        self.namespaces = namespaces
        self.max_auth_results = max_auth_results

    def fail(self, what: str):
        raise ReportError(f"{self.origin}: {what}")

    def section(self, element) -> Section:
        children = []
        for child in element:
            tag = child.tag
            if not isinstance(tag, str):
                continue
            if tag[0] == "{":
                namespace, _, local = tag[1:].partition("}")
                if namespace not in self.namespaces:
                    self.note(f"ns:{local}", f"the element <{local}> in namespace {namespace!r} was skipped")
                    continue
            children.append(self.section(child))
        tag = element.tag
        name = tag.rpartition("}")[2]
        text = "" if children else (element.text or "").strip()
        return Section(name, text, children)

    def one(self, parent: Section, name: str, *, where: str) -> Section | None:
        found = parent.all(name)
        if len(found) > 1:
            self.fail(f"{where} has {len(found)} <{name}> elements where one is allowed")
        return found[0] if found else None

    def required(self, parent: Section, name: str, alias: str, why: str, *, where: str) -> Section:
        """The one <name>, else the one <alias> (noted as read for <name>); refused without."""
        found = self.one(parent, name, where=where)
        if found is None:
            found = self.one(parent, alias, where=where)
            if found is not None:
                self.note(alias, f"<{alias}> ({why}) was read as <{name}>")
        if found is None:
            self.fail(f"{where} has no <{name}>")
        return found

    def text(self, parent: Section, name: str, *, where: str, required: bool = False,
             warn_missing: bool = False, warn_empty: bool = True) -> str:
        """The element's text; "" when omitted. Required and missing raises; empty warns."""
        element = self.one(parent, name, where=where)
        if element is None:
            if required:
                self.fail(f"{where} has no <{name}>")
            if warn_missing:
                self.note(f"missing:{where}:{name}", f"{where} lacks <{name}>")
            return ""
        if warn_empty and not element.text and not element.children:
            self.note(f"empty:{where}:{name}", f"{where} has an empty <{name}>")
        return element.text

    def integer(self, parent: Section, name: str, *, where: str) -> int:
        text = self.text(parent, name, where=where, required=True)
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is None or not number.is_integer():
            self.fail(f"<{name}> in {where} is {text[:40]!r}, not a whole number")
        self.note(f"float:{name}", f"<{name}> is written as {text[:40]!r}; read as {int(number)}")
        return int(number)


def meta_from(metadata: Section, policy: Section, version: Section | None, fields: Fields) -> ReportMeta:
    """ReportMeta from <report_metadata>, <policy_published> and <version>."""
    note = fields.note
    where = "<report_metadata>"
    report_id = fields.text(metadata, "report_id", where=where, required=True)
    if not report_id:
        fields.fail("<report_id> is empty")
    date_range = fields.required(metadata, "date_range", "data_range", "a misspelling", where=where)
    begin, end = _instant(date_range, "begin", fields), _instant(date_range, "end", fields)
    if begin > end:
        note("range", "<date_range> begins after it ends")
    if begin < FIRST_REPORT_EPOCH:
        note("ancient", f"<date_range> begins {from_epoch(begin).date()}, before DMARC existed "
                        "(2012): the reporter's clock is wrong; left out of /reports/date-range")
    errors = [e.text for e in metadata.all("error")] or None
    return ReportMeta(
        org_name=fields.text(metadata, "org_name", where=where, warn_missing=True),
        report_id=report_id,
        date_begin=begin,
        date_end=end,
        domain=_policy_domain(policy, fields),
        version=(version.text if version is not None and version.text else "1.0"),
        email=fields.text(metadata, "email", where=where, warn_missing=True),
        extra_contact_info=fields.text(metadata, "extra_contact_info", where=where, warn_empty=False),
        errors=errors,
        generator=fields.text(metadata, "generator", where=where),
        **_policy(policy, fields),
    )


def _instant(date_range: Section, name: str, fields: Fields) -> int:
    seconds = fields.integer(date_range, name, where="<date_range>")
    try:
        return epoch_in_range(seconds, f"<{name}> {str(seconds)[:40]} in <date_range>")
    except ReportError as exc:
        fields.fail(str(exc))


def _policy_domain(policy: Section, fields: Fields) -> str:
    raw = fields.text(policy, "domain", where="<policy_published>", required=True)
    if not raw:
        fields.fail("<policy_published> has an empty <domain>")
    try:
        return normalize(raw)
    except InvalidDomain:
        fields.note("domain", f"the policy domain {raw!r} is not a valid domain name; kept as written")
        return raw.strip().lower()


def _policy(policy: Section, fields: Fields) -> dict:
    where = "<policy_published>"
    note = fields.note

    def pick(name: str, allowed: set[str], kind: str) -> str:
        return values.enum(fields.text(policy, name, where=where), allowed, field=name, kind=kind, note=note)

    testing = fields.one(policy, "testing", where=where)
    testing_name = "testing" if testing is not None else "t"
    pct_text = fields.text(policy, "pct", where=where)
    pct = None
    if pct_text:
        try:
            pct = int(pct_text)
            if not 0 <= pct <= 100:
                raise ValueError(pct_text)
        except ValueError:
            note("pct", f"<pct> value {pct_text!r} is not a percentage from 0 to 100; ignored")
            pct = None
    p = pick("p", values.POLICIES, "policy")
    if "p" not in {child.name for child in policy.children}:
        note("missing:p", "<policy_published> lacks <p>")
    return {
        "adkim": pick("adkim", values.ALIGNMENT_MODES, "mode"),
        "aspf": pick("aspf", values.ALIGNMENT_MODES, "mode"),
        "p": p,
        "sp": pick("sp", values.POLICIES, "policy"),
        "np": pick("np", values.POLICIES, "policy"),
        "pct": pct,
        "fo": fields.text(policy, "fo", where=where),
        "testing": pick(testing_name, values.FLAGS, "flag"),
        "psd": pick("psd", values.PSD_FLAGS, "flag"),
        "discovery_method": pick("discovery_method", values.DISCOVERY, "discovery"),
    }


def record_from(record: Section, number: int, adkim: str, aspf: str, fields: Fields) -> ParsedRecord:
    """One <record>; policy_evaluated verdicts the reporter left out are derived from auth_results."""
    note = fields.note
    where = f"record {number}"
    row = fields.one(record, "row", where=where)
    if row is None:
        fields.fail(f"{where} has no <row>")
    identifiers = fields.required(record, "identifiers", "identities", "an old name", where=where)
    count = fields.integer(row, "count", where=f"the <row> of {where}")
    if count < 0:
        fields.fail(f"<count> in {where} is negative")
    source_ip = _source_ip(fields.text(row, "source_ip", where="<row>", required=True), note)
    header_from = fields.text(identifiers, "header_from", where="<identifiers>", required=True)
    auth = fields.one(record, "auth_results", where=where)
    if auth is not None and len(auth.all("dkim")) + len(auth.all("spf")) > fields.max_auth_results:
        fields.fail(f"{where} has more than {fields.max_auth_results:,} auth results "
                    "(RUA_MAX_AUTH_RESULTS)")
    auth_dkim, auth_spf = _auth_results(auth, fields) if auth is not None else (None, None)
    evaluated = fields.one(row, "policy_evaluated", where=f"the <row> of {where}")
    if evaluated is None:
        note("no-evaluated", "a record lacks <policy_evaluated>; its verdicts were derived from <auth_results>")
        evaluated = Section("policy_evaluated")
    where_eval = "<policy_evaluated>"
    disposition = values.enum(fields.text(evaluated, "disposition", where=where_eval),
                              values.DISPOSITIONS, field="disposition", kind="disposition", note=note)
    if not disposition:
        disposition = "none"
        note("disposition", "a record lacks a <disposition>; read as 'none'")
    dkim = values.enum(fields.text(evaluated, "dkim", where=where_eval), values.VERDICTS,
                       field="dkim", kind="verdict", note=note)
    spf = values.enum(fields.text(evaluated, "spf", where=where_eval), values.VERDICTS,
                      field="spf", kind="verdict", note=note)
    if not dkim:
        note("derive:dkim", "<policy_evaluated> lacks <dkim>; derived from aligned DKIM results")
        dkim = _derived(auth_dkim, header_from, adkim)
    if not spf:
        note("derive:spf", "<policy_evaluated> lacks <spf>; derived from aligned SPF results")
        spf = _derived([r for r in auth_spf or [] if r["Scope"] != "helo"], header_from, aspf)
    return ParsedRecord(
        source_ip=source_ip, count=count, disposition=disposition, dkim=dkim, spf=spf,
        reasons=_reasons(evaluated, fields),
        envelope_to=fields.text(identifiers, "envelope_to", where="<identifiers>"),
        # Empty for a bounce (a null MAIL FROM): RFC 9990 keeps the element, empty.
        envelope_from=fields.text(identifiers, "envelope_from", where="<identifiers>",
                                  warn_empty=False),
        header_from=header_from, auth_dkim=auth_dkim, auth_spf=auth_spf,
    )


def _source_ip(text: str, note: Note) -> str:
    if not text:
        return ""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        note("ip", f"<source_ip> {text[:40]!r} is not an IP address; kept as written")
    return text


def _derived(results: list[dict] | None, header_from: str, mode: str) -> str:
    for result in results or []:
        if result["Result"] == "pass" and aligned(result["Domain"], header_from, mode):
            return "pass"
    return "fail"


def _reasons(evaluated: Section, fields: Fields) -> list[dict] | None:
    reasons = []
    for reason in evaluated.all("reason"):
        kind = fields.text(reason, "type", where="<reason>")
        comment = fields.text(reason, "comment", where="<reason>", warn_empty=False)
        if not kind and not comment:
            fields.note("empty-reason", "an empty <reason> was skipped")
            continue
        reasons.append({"Type": values.reason_type(kind, fields.note) if kind else "", "Comment": comment})
    return reasons or None


def _auth_results(auth: Section, fields: Fields) -> tuple[list[dict] | None, list[dict] | None]:
    note = fields.note
    names = [child.name for child in auth.children if child.name in ("dkim", "spf")]
    if "spf" in names and "dkim" in names[names.index("spf"):]:
        note("auth-order", "<auth_results> lists <spf> before <dkim>, out of the schema's order")
    dkim = [{
        "Domain": fields.text(r, "domain", where="<dkim>"),
        "Selector": fields.text(r, "selector", where="<dkim>"),
        "Result": values.enum(fields.text(r, "result", where="<dkim>"), values.DKIM_RESULTS,
                              field="result", kind="result", note=note),
        "HumanResult": fields.text(r, "human_result", where="<dkim>", warn_empty=False),
    } for r in auth.all("dkim")]
    spf = [{
        "Domain": fields.text(r, "domain", where="<spf>"),
        "Scope": values.enum(fields.text(r, "scope", where="<spf>"), values.SPF_SCOPES,
                             field="scope", kind="scope", note=note),
        "Result": values.enum(fields.text(r, "result", where="<spf>"), values.SPF_RESULTS,
                              field="result", kind="result", note=note),
        "HumanResult": fields.text(r, "human_result", where="<spf>", warn_empty=False),
    } for r in auth.all("spf")]
    return dkim or None, spf or None
