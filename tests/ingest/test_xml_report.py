"""Reading one report: both XML versions, every tolerated departure (a warning), every refusal."""
import io

import pytest

from ingest.model import Document, ReportError
from ingest.xml_report import parse
from tests.ingest import xmlbuild as xb
from tests.ingest.xmlbuild import OMIT


def document(data, origin="report.xml") -> Document:
    data = data.encode("utf-8") if isinstance(data, str) else data
    return Document(origin, lambda: io.BytesIO(data))


def read(data):
    """(meta, records, warnings) of a whole document."""
    parsed = parse(document(data))
    records = list(parsed.records)
    return parsed.meta, records, parsed.warnings


def test_an_rfc7489_report_gives_every_field_under_the_contracts_names():
    rec = xb.record(source_ip="198.51.100.7", count=12, disposition="quarantine", dkim="fail", spf="pass",
                    envelope_from="bounce.example.com", reasons=[{"type": "mailing_list", "comment": "list"}],
                    auth_dkim=[{"domain": "example.com", "selector": "k1", "result": "fail",
                                "human_result": "bad sig"}],
                    auth_spf=[{"domain": "bounce.example.com", "scope": "mfrom", "result": "pass"}])
    rec["identifiers"]["envelope_to"] = "example.net"
    meta, records, warnings = read(xb.report([rec], metadata={"extra_contact_info": "https://r.example",
                                                               "error": ["dns timeout", "x"]},
                                             policy={"fo": "1"}))
    assert (meta.org_name, meta.report_id, meta.date_begin, meta.date_end) == ("Example Receiver", "r-1",
                                                                               1700000000, 1700086399)
    assert (meta.email, meta.extra_contact_info, meta.errors) == ("noreply@receiver.example",
                                                                  "https://r.example", ["dns timeout", "x"])
    assert (meta.domain, meta.adkim, meta.aspf, meta.p, meta.sp, meta.pct, meta.fo) == (
        "example.com", "r", "r", "none", "none", 100, "1")
    assert (meta.np, meta.testing, meta.psd, meta.discovery_method, meta.generator) == ("", "", "", "", "")
    assert meta.version == "1.0"
    [record] = records
    assert (record.source_ip, record.count, record.disposition, record.dkim, record.spf) == (
        "198.51.100.7", 12, "quarantine", "fail", "pass")
    assert (record.header_from, record.envelope_from, record.envelope_to) == (
        "example.com", "bounce.example.com", "example.net")
    assert record.reasons == [{"Type": "mailing_list", "Comment": "list"}]
    assert record.auth_dkim == [{"Domain": "example.com", "Selector": "k1", "Result": "fail",
                                 "HumanResult": "bad sig"}]
    assert record.auth_spf == [{"Domain": "bounce.example.com", "Scope": "mfrom", "Result": "pass",
                                "HumanResult": ""}]
    assert warnings == []


def test_an_rfc9990_report_in_its_namespace_gives_np_testing_discovery_and_generator():
    meta, records, warnings = read(xb.report(version="rfc9990", policy={"psd": "n"}))
    assert (meta.np, meta.testing, meta.discovery_method, meta.generator, meta.psd) == (
        "reject", "n", "treewalk", "rua tests", "n")
    assert meta.pct is None and meta.errors is None
    assert len(records) == 1 and warnings == []


def test_the_old_dmarc_org_namespace_reads_like_no_namespace():
    text = xb.report().replace("<feedback>", '<feedback xmlns="http://dmarc.org/dmarc-xml/0.1">')
    meta, records, warnings = read(text)
    assert meta.domain == "example.com" and len(records) == 1 and warnings == []


def test_omitted_elements_are_empty_strings_or_none():
    rec = xb.record(reasons=OMIT)
    del rec["auth_results"]
    rec["identifiers"] = {"header_from": "example.com"}
    meta, [record], _ = read(xb.report([rec], metadata={"email": OMIT}, policy={"sp": OMIT, "pct": OMIT}))
    assert (meta.sp, meta.pct, meta.email, meta.errors) == ("", None, "", None)
    assert (record.envelope_from, record.envelope_to, record.reasons) == ("", "", None)
    assert record.auth_dkim is None and record.auth_spf is None


@pytest.mark.parametrize("prefix, encoding", [
    (b"\xef\xbb\xbf", "utf-8"),
    (b"", "windows-1252"),
    (b"", "iso-8859-1"),
])
def test_boms_and_declared_encodings_are_honoured(prefix, encoding):
    text = xb.report(org_name="Müller Mail", declaration=f'<?xml version="1.0" encoding="{encoding}"?>\n')
    meta, _, warnings = read(prefix + text.encode(encoding))
    assert meta.org_name == "Müller Mail" and warnings == []


def test_utf16_with_a_bom_is_read():
    text = xb.report(org_name="Œuvre", declaration='<?xml version="1.0" encoding="UTF-16"?>')
    meta, _, _ = read(text.encode("utf-16"))
    assert meta.org_name == "Œuvre"


def _with_record(**kwargs):
    return xb.report([xb.record(**kwargs)])


WARNINGS = [
    ("values in another case are read in lower case",
     _with_record(dkim="Pass", spf="PASS", disposition="None"), "'Pass' was read as 'pass'",
     lambda m, r: (r.dkim, r.spf, r.disposition) == ("pass", "pass", "none")),
    ("hardfail is read as fail",
     _with_record(auth_spf=[{"domain": "example.com", "scope": "mfrom", "result": "hardfail"}]),
     "'hardfail' was read as 'fail'", lambda m, r: r.auth_spf[0]["Result"] == "fail"),
    ("a disposition of pass is read as none",
     _with_record(disposition="pass"), "'pass' was read as 'none'", lambda m, r: r.disposition == "none"),
    ("the misspelled data_range is read as date_range",
     xb.report().replace("date_range>", "data_range>"), "<data_range>",
     lambda m, r: (m.date_begin, m.date_end) == (1700000000, 1700086399)),
    ("an empty optional element is read as empty",
     xb.report(policy={"sp": ""}), "empty <sp>", lambda m, r: m.sp == ""),
    ("a missing email is read as empty",
     xb.report(metadata={"email": OMIT}), "lacks <email>", lambda m, r: m.email == ""),
    ("forwarded becomes trusted_forwarder, naming the original",
     _with_record(reasons=[{"type": "forwarded", "comment": ""}]), "'forwarded'",
     lambda m, r: r.reasons == [{"Type": "trusted_forwarder", "Comment": ""}]),
    ("sampled_out becomes other, naming the original",
     _with_record(reasons=[{"type": "sampled_out"}]), "'sampled_out'",
     lambda m, r: r.reasons == [{"Type": "other", "Comment": ""}]),
    ("an empty reason is skipped",
     _with_record(reasons=[""]), "empty <reason>", lambda m, r: r.reasons is None),
    ("a namespaced extension element is skipped",
     xb.report(before='<ext:extra xmlns:ext="https://x.example/ns"><ext:a>1</ext:a></ext:extra>'),
     "namespace 'https://x.example/ns' was skipped", lambda m, r: r.count == 1),
    ("an extension element is skipped",
     xb.report(version="rfc9990", after="<extension><x>1</x></extension>"), "<extension>",
     lambda m, r: r.count == 1),
    ("a namespaced element inside a record is skipped",
     xb.report([xb.record(x={"y": 1})]).replace("<x><y>1</y></x>", '<v:x xmlns:v="urn:vendor">1</v:x>'),
     "namespace 'urn:vendor'", lambda m, r: r.header_from == "example.com"),
    ("a verdict missing from policy_evaluated is derived from aligned auth results",
     _with_record(dkim=OMIT, spf=OMIT, auth_dkim=[{"domain": "mail.example.com", "result": "pass"}],
                  auth_spf=[{"domain": "other.example", "result": "pass"}]),
     "lacks <dkim>", lambda m, r: (r.dkim, r.spf) == ("pass", "fail")),
    ("a record without policy_evaluated is derived too",
     xb.report([xb.record(row={"source_ip": "192.0.2.9", "count": 3})]), "lacks <policy_evaluated>",
     lambda m, r: (r.disposition, r.dkim, r.spf, r.count) == ("none", "pass", "pass", 3)),
    ("an empty source_ip is kept empty",
     _with_record(source_ip=""), "empty <source_ip>", lambda m, r: r.source_ip == ""),
    ("an unescaped '<' in a value is read as text",
     xb.report(metadata={"email": "<bad@x.example>"}, org_name="a<b"), "unescaped '<'",
     lambda m, r: (m.email, m.org_name) == ("<bad@x.example>", "a<b")),
    ("a byte that is not UTF-8 is replaced",
     xb.report_bytes(org_name="bad_byte_X").replace(b"_X", b"\x91"), "U+FFFD",
     lambda m, r: m.org_name == "bad_byte\ufffd"),
    ("a policy domain that is not a domain name is kept in lower case",
     xb.report(domain="Not A Domain"), "not a valid domain name", lambda m, r: m.domain == "not a domain"),
    ("a pct that is not a percentage is ignored",
     xb.report(policy={"pct": "abc"}), "<pct>", lambda m, r: m.pct is None),
    ("spf before dkim in auth_results is read in either order",
     xb.report([xb.record()]).replace(
         "<dkim><domain>example.com</domain><selector>s1</selector><result>pass</result></dkim>", "").replace(
         "</spf></auth_results>", "</spf><dkim><domain>example.com</domain><result>pass</result></dkim>"
         "</auth_results>"),
     "<spf> before <dkim>", lambda m, r: r.auth_dkim[0]["Result"] == "pass"),
    ("policy_published after the records is read",
     xb.report(order=("report_metadata", "records", "policy_published")), "out of the schema's order",
     lambda m, r: m.domain == "example.com" and r.count == 1),
    ("the old <identities> element is read as <identifiers>",
     xb.report().replace("identifiers>", "identities>"), "<identities>",
     lambda m, r: r.header_from == "example.com"),
    ("white space before the declaration is tolerated",
     "  \n" + xb.report(), "white space", lambda m, r: r.count == 1),
    ("an unknown element is skipped",
     xb.report(after="<summary>3</summary>"), "unknown element <summary>", lambda m, r: r.count == 1),
    ("a whole number written with a decimal point is read",
     xb.report(begin="1700000000.0"), "read as 1700000000", lambda m, r: m.date_begin == 1700000000),
    ("a report in an unknown namespace is read with a warning",
     xb.report().replace("<feedback>", '<feedback xmlns="urn:example:dmarc">'), "unknown namespace",
     lambda m, r: (m.domain, r.count) == ("example.com", 1)),
    ("a report dated 1970 is kept, with a warning that its reporter's clock is wrong",
     xb.report(begin="0", end="86400"), "begins 1970-01-01, before DMARC existed",
     lambda m, r: m.date_begin == 0),
    ("a source_ip that is not an address is kept",
     _with_record(source_ip="1.2.3"), "not an IP address", lambda m, r: r.source_ip == "1.2.3"),
]


@pytest.mark.parametrize("text, expected, check", [w[1:] for w in WARNINGS], ids=[w[0] for w in WARNINGS])
def test_a_tolerated_departure_is_read_and_becomes_a_warning(text, expected, check):
    meta, records, warnings = read(text)
    assert any(expected in warning for warning in warnings), warnings
    assert check(meta, records[0])


def test_t_policy_test_mode_psd_and_discovery_method_are_kept_without_warning():
    rec = xb.record(reasons=[{"type": "policy_test_mode", "comment": "t=y"}])
    meta, [record], warnings = read(xb.report([rec], policy={"t": "y", "psd": "u", "discovery_method": "psl"}))
    assert (meta.testing, meta.psd, meta.discovery_method) == ("y", "u", "psl")
    assert record.reasons == [{"Type": "policy_test_mode", "Comment": "t=y"}]
    assert warnings == []


def test_a_warning_is_given_once_however_many_records_repeat_it():
    _, records, warnings = read(xb.report([xb.record(source_ip="") for _ in range(5)]))
    assert len(records) == 5 and len([w for w in warnings if "source_ip" in w]) == 1


def test_metadata_is_complete_before_records_and_warnings_grow_while_they_stream():
    parsed = parse(document(xb.report([xb.record(), xb.record(source_ip="")])))
    assert parsed.meta.domain == "example.com" and parsed.warnings == []
    assert [r.source_ip for r in parsed.records] == ["192.0.2.1", ""]
    assert any("source_ip" in w for w in parsed.warnings)


REFUSALS = [
    ("plain text", b"this is not xml at all", "not well-formed XML"),
    ("another root", b"<html><body>hi</body></html>", "root element is <html>"),
    ("truncated", xb.report_bytes()[:-60], "not well-formed XML"),
    ("no report_metadata", xb.report(order=("policy_published", "records")), "no <report_metadata>"),
    ("no policy_published", xb.report(order=("report_metadata", "records")), "no <policy_published>"),
    ("no record", xb.report([]), "no <record>"),
    ("a non-numeric count", xb.report([xb.record(count="many")]), "'many', not a whole number"),
    ("a missing date range", xb.report(metadata={"date_range": OMIT}), "no <date_range>"),
    ("a non-numeric begin", xb.report(begin="yesterday"), "not a whole number"),
    ("a fractional end", xb.report(end="1700086399.5"), "not a whole number"),
    ("a missing report_id", xb.report(metadata={"report_id": OMIT}), "no <report_id>"),
    ("an empty policy domain", xb.report(domain=""), "empty <domain>"),
    ("two emails", xb.report(metadata={"email": ["a@x.example", "b@x.example"]}), "2 <email> elements"),
    ("two rows", xb.report([xb.record(row=[{"source_ip": "192.0.2.1", "count": 1}] * 2)]), "2 <row> elements"),
    ("a record without identifiers", xb.report([xb.record(identifiers=OMIT)]), "no <identifiers>"),
    ("a record without header_from", xb.report([xb.record(identifiers={"envelope_from": "x.example"})]),
     "no <header_from>"),
    ("two policies", xb.report(order=("report_metadata", "policy_published", "policy_published", "records")),
     "more than one <policy_published>"),
    ("an unknown encoding", xb.report(declaration='<?xml version="1.0" encoding="x-nope"?>'),
     "unknown character encoding"),
    ("an undefined entity", xb.report(org_name="&nope;"), "not well-formed XML"),
    ("broken UTF-16", "\ufeff<feedback>".encode("utf-16-le") + b"\x00\xdc\x00\xdc" * 4, "not valid utf-16"),
]


@pytest.mark.parametrize("text, expected", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_an_unreadable_report_is_refused_with_a_one_line_reason_naming_it(text, expected):
    with pytest.raises(ReportError) as caught:
        read(text)
    message = str(caught.value)
    assert message.startswith("report.xml: ") and expected in message
    assert "\n" not in message


def test_a_refusal_while_records_stream_comes_out_of_the_iterator():
    parsed = parse(document(xb.report([xb.record(), xb.record(count="x")])))
    records = iter(parsed.records)
    assert next(records).count == 1
    with pytest.raises(ReportError, match="not a whole number"):
        next(records)


def test_a_valid_rfc9990_report_with_a_bounce_and_an_extension_reads_without_warnings():
    # A null MAIL FROM is an empty <envelope_from>; <extension> sits in the schema's place.
    bounces = [xb.record(source_ip=f"192.0.2.{n}", envelope_from="") for n in range(1, 4)]
    data = xb.report(bounces, version="rfc9990", policy={"psd": "n"}).replace(
        "<record>", '<extension><x:a xmlns:x="urn:x">1</x:a></extension><record>', 1)
    meta, records, warnings = read(data)
    assert warnings == [] and meta.psd == "n"
    assert [r.envelope_from for r in records] == ["", "", ""]


@pytest.mark.parametrize("psd, warning", [("x", "non-standard value 'x'"),
                                          ("yes", "'yes' was read as 'y'")])
def test_a_psd_other_than_y_n_u_earns_a_warning(psd, warning):
    _, _, warnings = read(xb.report(version="rfc9990", policy={"psd": psd}))
    assert any(warning in w for w in warnings), warnings
