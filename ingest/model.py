"""What parsing hands to storing: plain dataclasses, no database and no I/O."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterator

from rules.authenticity import NOT_FROM_MAIL, Provenance

# note(field, message): how the readers record a parse warning and read on.
Note = Callable[[str, str], None]


class ReportError(ValueError):
    """A document cannot be read as an aggregate report; the message is the one-line reason."""


class NotMonitored(ReportError):
    """A report refused for its policy domain: no organization monitors it (org is None), or
    the organization may take no more domains from reports (org names it)."""

    def __init__(self, message: str, domain: str, org: str | None = None):
        super().__init__(message)
        self.domain, self.org = domain, org


@dataclass
class Document:
    """One XML document found in an input; origin names the file and any members it sits in."""
    origin: str                      # e.g. "mail.eml » report.zip » google.com!x!1!2.xml"
    open: Callable[[], BinaryIO]     # a fresh binary stream of the (decompressed) document
    kind: str = "dmarc"              # dmarc (aggregate XML) | tlsrpt (RFC 8460 JSON)
    notes: tuple[str, ...] = ()      # how its container departed from its label, as warnings
    provenance: Provenance = NOT_FROM_MAIL   # what the mail it came in proves of its origin


@dataclass
class ParsedRecord:
    """One <record>, normalized; auth results keep the contract's field names."""
    source_ip: str
    count: int
    disposition: str                     # none | quarantine | reject
    dkim: str                            # pass | fail: policy_evaluated (aligned) verdict
    spf: str                             # pass | fail
    reasons: list[dict] | None           # [{"Type": ..., "Comment": ...}]
    envelope_to: str
    envelope_from: str
    header_from: str
    auth_dkim: list[dict] | None         # [{"Domain", "Selector", "Result", "HumanResult"}]
    auth_spf: list[dict] | None          # [{"Domain", "Scope", "Result", "HumanResult"}]


@dataclass
class ReportMeta:
    """report_metadata and policy_published; complete before the first record is read."""
    org_name: str
    report_id: str
    date_begin: int
    date_end: int
    domain: str                          # policy domain, normalized lower-case ASCII
    version: str = "1.0"
    email: str = ""
    extra_contact_info: str = ""
    errors: list[str] | None = None
    generator: str = ""
    adkim: str = ""
    aspf: str = ""
    p: str = ""
    sp: str = ""
    np: str = ""
    pct: int | None = None
    fo: str = ""
    testing: str = ""
    psd: str = ""
    discovery_method: str = ""


@dataclass
class ParsedReport:
    """A report whose records stream: iterate `records` once, then read `warnings` (it grows)."""
    origin: str
    meta: ReportMeta
    records: Iterator[ParsedRecord]
    warnings: list[str] = field(default_factory=list)
    digest: str = ""                     # SHA-256 of the XML; "" when not computed


@dataclass
class RefusedInput:
    """An input (or a member of one) that holds no readable report; reason is one line."""
    origin: str
    reason: str
