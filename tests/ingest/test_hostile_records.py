"""Records per report are capped, and memory stays flat whatever order a report's elements take."""
import io
import subprocess
import sys
import textwrap

import pytest

from ingest.model import Document, ReportError
from ingest.pipeline import ingest_paths
from ingest.xml_report import parse
from store.models import Record, Report
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild as xb

MB = 1 << 20
RECORDS_FIRST = ("records", "report_metadata", "policy_published")


def records_of(text: str, **kwargs):
    data = text.encode()
    parsed = parse(Document("r.xml", lambda: io.BytesIO(data)), **kwargs)
    return parsed, list(parsed.records)


def test_records_before_the_policy_are_all_read_once_in_order():
    records = [xb.record(source_ip=f"192.0.2.{n}", count=n) for n in range(1, 6)]
    parsed, found = records_of(xb.report(records, order=RECORDS_FIRST,
                                         policy={"adkim": "s"}))
    assert [r.count for r in found] == [1, 2, 3, 4, 5]
    assert parsed.meta.adkim == "s" and any("out of the schema's order" in w
                                            for w in parsed.warnings)


def test_records_split_around_the_policy_are_read_once():
    records = "".join(xb.element("record", xb.record(count=n)) for n in (1, 2))
    text = xb.report([xb.record(count=3)], before=records)
    assert [r.count for r in records_of(text)[1]] == [1, 2, 3]


@pytest.mark.parametrize("order", [None, RECORDS_FIRST])
def test_a_report_over_the_record_cap_is_refused(order):
    text = xb.report([xb.record(count=n) for n in range(1, 5)], **({"order": order} if order else {}))
    assert len(records_of(text, max_records=4)[1]) == 4
    with pytest.raises(ReportError, match=r"more than 3 records \(RUA_MAX_RECORDS\)"):
        records_of(text, max_records=3)


def test_a_report_over_the_cap_stores_nothing_and_the_next_one_is_stored(database, config,
                                                                         tmp_path):
    make_domain(make_org("Acme"), "example.com")
    big, small = tmp_path / "big.xml", tmp_path / "small.xml"
    big.write_bytes(xb.report_bytes([xb.record(count=n) for n in range(1, 12)], report_id="big"))
    small.write_bytes(xb.report_bytes(report_id="small"))
    results = list(ingest_paths([str(big), str(small)], config=config.replace(max_records=10)))
    assert [r.status for r in results] == ["refused", "stored"]
    assert "RUA_MAX_RECORDS" in results[0].error
    assert [r.report_id for r in Report.select()] == ["small"] and Record.select().count() == 1


PEAK_SCRIPT = textwrap.dedent("""
    import io, sys
    from ingest.model import Document
    from ingest.xml_report import parse
    def peak_kb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    before = peak_kb()
    parsed = parse(Document(sys.argv[1], lambda: open(sys.argv[1], "rb")))
    print(sum(1 for _ in parsed.records), peak_kb() - before)
""")


def test_records_first_stream_with_flat_memory(tmp_path):
    path = tmp_path / "first.xml"
    head, tail = xb.report(["@@"], order=RECORDS_FIRST).split("<record>@@</record>")
    with open(path, "w") as out:
        out.write(head)
        for n in range(30_000):
            out.write(xb.element("record", xb.record(source_ip=f"10.0.{n // 256}.{n % 256}")))
        out.write(tail)
    result = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, str(path)], capture_output=True,
                            text=True, check=True)
    records, growth_kb = map(int, result.stdout.split())
    # Held as a tree, the records came to several times the file's size; streamed, a fraction.
    assert records == 30_000 and growth_kb * 1024 < path.stat().st_size


def test_records_before_the_policy_past_the_cap_are_refused_before_the_policy_is_read():
    text = xb.report([xb.record(count=n) for n in range(1, 5)], order=RECORDS_FIRST)
    with pytest.raises(ReportError, match="RUA_MAX_RECORDS"):
        parse(Document("r.xml", lambda: io.BytesIO(text.encode())), max_records=3)
