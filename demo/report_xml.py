"""Aggregate-report XML text for the demo generator, in the RFC 7489 or RFC 9990 dialect.

Text is built piece by piece (never as a tree) so a report of a million records can be
written to a file with flat memory; values are escaped like any XML writer would.
"""
from __future__ import annotations

from dataclasses import dataclass, field
# html's escape with quote=False is xml.sax.saxutils' (&, <, >) without its import of
# urllib.request, http.client and ssl, which `rua --help` paid for through cli/demo.py.
from html import escape as _escape

RFC7489 = "rfc7489"
RFC9990 = "rfc9990"
NAMESPACE_9990 = "urn:ietf:params:xml:ns:dmarc-2.0"


@dataclass(frozen=True)
class Style:
    """How one reporter lays out its XML: dialect, declaration, indentation, optional parts."""
    dialect: str = RFC7489
    declaration: str = '<?xml version="1.0" encoding="UTF-8" ?>'
    indent: str = "  "                  # "" writes the whole report on one line
    root_attributes: str = ""           # e.g. Microsoft's xmlns:xsd / xmlns:xsi
    version: bool = False               # write <version>1.0</version>
    envelope_to: bool = False
    envelope_from: bool = False
    np: bool = False                    # RFC 7489 reporters that already add <np>
    fo: bool = False
    human_result: bool = False


@dataclass
class Row:
    """One <record>: what a receiver saw from one source for one outcome."""
    source_ip: str
    count: int
    disposition: str
    dkim: str
    spf: str
    header_from: str
    envelope_from: str = ""
    envelope_to: str = ""
    reasons: tuple = ()         # ((type, comment), ...)
    auth_dkim: tuple = ()       # ((domain, selector, result), ...)
    auth_spf: tuple = ()        # ((domain, scope, result), ...)


@dataclass(frozen=True)
class DmarcRecord:
    """The DMARC record a domain publishes (RFC 9990 reporters show `testing` instead of pct)."""
    p: str
    sp: str = ""
    np: str = ""
    adkim: str = "r"
    aspf: str = "r"
    pct: int = 100
    fo: str = "0"

    @property
    def testing(self) -> str:
        return "y" if self.pct < 100 else "n"


@dataclass
class ReportHeader:
    """report_metadata and policy_published of one report."""
    org_name: str
    email: str
    report_id: str
    begin: int
    end: int
    domain: str
    policy: DmarcRecord
    extra_contact_info: str = ""
    generator: str = ""
    discovery_method: str = "psl"
    errors: list = field(default_factory=list)


class _Writer:
    """Collects indented lines (or one compact line) for a fragment of the document."""

    def __init__(self, style: Style, depth: int):
        self.parts: list[str] = []
        self.indent = style.indent
        self.newline = "\n" if style.indent else ""
        self.depth = depth

    def open(self, name: str):
        self.parts.append(f"{self.indent * self.depth}<{name}>{self.newline}")
        self.depth += 1

    def close(self, name: str):
        self.depth -= 1
        self.parts.append(f"{self.indent * self.depth}</{name}>{self.newline}")

    def leaf(self, name: str, value):
        text = _escape(str(value), quote=False)
        self.parts.append(f"{self.indent * self.depth}<{name}>{text}</{name}>{self.newline}")

    def text(self) -> str:
        return "".join(self.parts)


def head(style: Style, meta: ReportHeader) -> str:
    """Everything before the first <record>."""
    bis = style.dialect == RFC9990
    w = _Writer(style, 1)
    if style.version or bis:
        w.leaf("version", "1.0")
    w.open("report_metadata")
    w.leaf("org_name", meta.org_name)
    w.leaf("email", meta.email)
    if meta.extra_contact_info:
        w.leaf("extra_contact_info", meta.extra_contact_info)
    w.leaf("report_id", meta.report_id)
    w.open("date_range")
    w.leaf("begin", meta.begin)
    w.leaf("end", meta.end)
    w.close("date_range")
    for error in meta.errors:
        w.leaf("error", error)
    if bis and meta.generator:
        w.leaf("generator", meta.generator)
    w.close("report_metadata")
    w.open("policy_published")
    w.leaf("domain", meta.domain)
    if bis:
        w.leaf("discovery_method", meta.discovery_method)
    policy = meta.policy
    w.leaf("adkim", policy.adkim)
    w.leaf("aspf", policy.aspf)
    w.leaf("p", policy.p)
    w.leaf("sp", policy.sp or policy.p)
    if bis or style.np:
        w.leaf("np", policy.np or policy.sp or policy.p)
    if not bis:
        w.leaf("pct", policy.pct)
    if style.fo or bis:
        w.leaf("fo", policy.fo)
    if bis:
        w.leaf("testing", policy.testing)
    w.close("policy_published")
    if bis:
        root = f'<feedback xmlns="{NAMESPACE_9990}"{style.root_attributes}>'
    else:
        root = f"<feedback{style.root_attributes}>"
    nl = "\n" if style.indent else ""
    return f"{style.declaration}{nl}{root}{nl}{w.text()}"


def record(style: Style, row: Row) -> str:
    """One <record> element, indented for its place under <feedback>."""
    bis = style.dialect == RFC9990
    w = _Writer(style, 1)
    w.open("record")
    w.open("row")
    w.leaf("source_ip", row.source_ip)
    w.leaf("count", row.count)
    w.open("policy_evaluated")
    w.leaf("disposition", row.disposition)
    w.leaf("dkim", row.dkim)
    w.leaf("spf", row.spf)
    for kind, comment in row.reasons:
        w.open("reason")
        w.leaf("type", kind)
        if comment:
            w.leaf("comment", comment)
        w.close("reason")
    w.close("policy_evaluated")
    w.close("row")
    w.open("identifiers")
    if style.envelope_to and row.envelope_to:
        w.leaf("envelope_to", row.envelope_to)
    if (style.envelope_from or bis) and row.envelope_from:
        w.leaf("envelope_from", row.envelope_from)
    w.leaf("header_from", row.header_from)
    w.close("identifiers")
    w.open("auth_results")
    for domain, selector, result in row.auth_dkim:
        w.open("dkim")
        w.leaf("domain", domain)
        w.leaf("selector", selector)
        w.leaf("result", result)
        if style.human_result and result != "pass":
            w.leaf("human_result", "signature did not verify (body hash mismatch)")
        w.close("dkim")
    for domain, scope, result in row.auth_spf:
        w.open("spf")
        w.leaf("domain", domain)
        w.leaf("scope", scope)
        w.leaf("result", result)
        w.close("spf")
    w.close("auth_results")
    w.close("record")
    return w.text()


FOOTER = "</feedback>\n"


def document(style: Style, meta: ReportHeader, rows) -> str:
    """A whole report as text (for the small daily reports)."""
    return head(style, meta) + "".join(record(style, row) for row in rows) + FOOTER
