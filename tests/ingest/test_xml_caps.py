"""An aggregate report is held to its caps as its records stream in; what no store can keep is
refused with a reason."""
import dataclasses
import io

import pytest

from ingest.caps import Caps
from ingest.model import Document, ReportError
from ingest.xml_report import parse
from tests.ingest import xmlbuild as xb

CAPS = Caps.of()


def small(**caps) -> Caps:
    return dataclasses.replace(CAPS, **caps)


class Counted(io.BytesIO):
    """A stream that remembers how many of its bytes were read."""
    taken = 0

    def read(self, size=-1):
        data = super().read(size)
        self.taken += len(data)
        return data


def read(text: str, caps: Caps = CAPS):
    data = text.encode()
    return list(parse(Document("r.xml", lambda: io.BytesIO(data)), caps=caps).records)


def refusal(text: str, caps: Caps = CAPS) -> str:
    with pytest.raises(ReportError) as caught:
        read(text, caps)
    return str(caught.value)


# The quick reader declines a record over the cap; the careful one (which also reads records
# in a spelling the quick one leaves to it) refuses it, naming the record.
@pytest.mark.parametrize("disposition", ["none", "Reject"])
def test_a_record_with_more_auth_results_than_the_cap_is_refused(disposition):
    records = [xb.record(), xb.record(disposition=disposition, auth_dkim=xb.dkim_results(4))]
    assert refusal(xb.report(records), small(auth_results=4)) == (
        "r.xml: record 2 has more than 4 auth results (RUA_MAX_AUTH_RESULTS)")
    assert len(read(xb.report(records), small(auth_results=5))) == 2


def test_auth_results_are_capped_over_the_whole_report():
    records = [xb.record(auth_dkim=xb.dkim_results(2))] * 3     # 3 results each, with the SPF
    assert len(read(xb.report(records), small(report_auth_results=9))) == 3
    assert refusal(xb.report(records), small(report_auth_results=8)) == (
        "r.xml: more than 8 auth results (RUA_MAX_REPORT_AUTH_RESULTS)")


@pytest.mark.parametrize("counts", [[2 ** 62], [2 ** 62 - 1, 2 ** 62], [3_000_000_000] * 2,
                                    ["4.6e18"]])
def test_a_report_counting_more_messages_than_the_cap_is_refused(counts):
    records = [xb.record(count=count) for count in counts]
    assert refusal(xb.report(records)) == (
        "r.xml: more than 4,000,000,000 messages (RUA_MAX_REPORT_MESSAGES)")


def test_a_record_far_over_the_cap_is_refused_before_the_parser_holds_it():
    data = xb.auth_flood(600_000)
    stream = Counted(data)
    with pytest.raises(ReportError, match=r"more than a record of 100 auth results needs "
                                          r"\(RUA_MAX_AUTH_RESULTS\)"):
        list(parse(Document("r.xml", lambda: stream)).records)
    assert stream.taken < 1 << 20 < len(data) // 20


@pytest.mark.parametrize("begin, end, reason", [
    (-1, 86400, "<begin> -1 in <date_range>"),
    (0, 253402300800, "<end> 253402300800 in <date_range>"),
    (0, "9" * 30, "<end> 999999999999999999999999999999 in <date_range>"),
])
def test_a_time_outside_1970_to_9999_is_refused(begin, end, reason):
    assert refusal(xb.report(begin=begin, end=end)) == (
        f"r.xml: {reason} is not a time between 1970 and 9999")


@pytest.mark.parametrize("text, reason", [
    ("&#0;", "xmlParseCharRef: invalid xmlChar value 0"),
    ("&#xD800;", "xmlParseCharRef: invalid xmlChar value 55296"),
])
def test_a_nul_or_a_lone_surrogate_is_refused_as_not_well_formed(text, reason):
    records = [xb.record(envelope_from=f"a{text}b.example")]
    assert refusal(xb.report(records)).startswith(f"r.xml: not well-formed XML ({reason}")


def test_a_raw_nul_is_removed_with_the_other_control_characters():
    [found] = read(xb.report([xb.record(envelope_from="a\x00b.example")]))
    assert found.envelope_from == "ab.example"
