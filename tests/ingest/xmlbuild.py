"""Write aggregate report XML for tests: RFC 7489 or RFC 9990, with any element changed or left out."""
from __future__ import annotations

import gzip
import io
import zipfile
from email.message import EmailMessage

RFC9990_NS = "urn:ietf:params:xml:ns:dmarc-2.0"
OMIT = object()


def element(name: str, value) -> str:
    """<name>value</name>; OMIT leaves it out, a list repeats it, a dict nests it."""
    if value is OMIT:
        return ""
    if isinstance(value, list):
        return "".join(element(name, item) for item in value)
    if isinstance(value, dict):
        return f"<{name}>" + "".join(element(k, v) for k, v in value.items()) + f"</{name}>"
    return f"<{name}>{value}</{name}>"


def record(source_ip="192.0.2.1", count=1, disposition="none", dkim="pass", spf="pass",
           header_from="example.com", envelope_from="example.com", reasons=OMIT,
           auth_dkim=None, auth_spf=None, **override) -> dict:
    """One <record> as nested values; override replaces whole parts (row=..., identifiers=...)."""
    evaluated = {"disposition": disposition, "dkim": dkim, "spf": spf, "reason": reasons}
    parts = {
        "row": {"source_ip": source_ip, "count": count, "policy_evaluated": evaluated},
        "identifiers": {"header_from": header_from, "envelope_from": envelope_from},
        "auth_results": {
            "dkim": auth_dkim if auth_dkim is not None else
            [{"domain": header_from, "selector": "s1", "result": "pass"}],
            "spf": auth_spf if auth_spf is not None else
            [{"domain": header_from, "scope": "mfrom", "result": "pass"}],
        },
    }
    parts.update(override)
    return parts


def dkim_results(count: int) -> list[dict]:
    """count <dkim> results of distinct domains, for an <auth_results> (auth_dkim=...)."""
    return [{"domain": f"d{n}.example", "selector": "s1", "result": "pass"} for n in range(count)]


def auth_flood(count: int, **fields) -> bytes:
    """A report of one <record> holding count <dkim> results (the same one repeated, built as
    bytes: fast for a million)."""
    head, tail = report([record(auth_dkim=[{"domain": "@@"}])], **fields).split("@@")
    one = element("dkim", {"domain": "d.example", "selector": "s1", "result": "pass"})
    return (head.rpartition("<dkim>")[0] + one * count + tail.partition("</dkim>")[2]).encode()


def report(records=None, *, version="rfc7489", org_name="Example Receiver", report_id="r-1",
           begin=1700000000, end=1700086399, domain="example.com", policy=None, metadata=None,
           before="", after="", declaration='<?xml version="1.0" encoding="UTF-8"?>\n',
           order=("report_metadata", "policy_published", "records")) -> str:
    """A whole report document as text."""
    records = [record()] if records is None else records
    meta = {"org_name": org_name, "email": "noreply@receiver.example", "report_id": report_id,
            "date_range": {"begin": begin, "end": end}}
    pol = {"domain": domain, "adkim": "r", "aspf": "r", "p": "none", "sp": "none"}
    if version == "rfc9990":
        meta["generator"] = "rua tests"
        pol.update({"np": "reject", "testing": "n", "discovery_method": "treewalk"})
    else:
        pol["pct"] = 100
    meta.update(metadata or {})
    pol.update(policy or {})
    sections = {
        "report_metadata": element("report_metadata", meta),
        "policy_published": element("policy_published", pol),
        "records": "".join(element("record", r) for r in records),
    }
    body = "".join(sections[name] for name in order)
    if version == "rfc9990":
        return f'{declaration}<feedback xmlns="{RFC9990_NS}"><version>1.0</version>{before}{body}{after}</feedback>\n'
    return f"{declaration}<feedback>{before}{body}{after}</feedback>\n"


def report_bytes(*args, **kwargs) -> bytes:
    return report(*args, **kwargs).encode("utf-8")


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zipped(members: dict[str, bytes]) -> bytes:
    """A zip holding members by name; a name ending in '/' is a directory entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def mail(attachments: dict[str, tuple[bytes, str]] | None = None, *, body: str = "A DMARC report.",
         cte: str = "base64") -> bytes:
    """An RFC 5322 message with attachments {filename: (data, content type)}."""
    message = EmailMessage()
    message["From"] = "noreply@receiver.example"
    message["To"] = "dmarc@example.com"
    message["Subject"] = "Report domain: example.com"
    message.set_content(body)
    for name, (data, content_type) in (attachments or {}).items():
        maintype, subtype = content_type.split("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name, cte=cte)
    return message.as_bytes()
