"""One input file has one budget across all its archive levels: bytes decompressed, members."""
import gzip
import zlib

import pytest

from ingest.archives import Budget, BudgetSpent
from ingest.files import iter_documents
from ingest.model import Document, RefusedInput
from ingest.pipeline import ingest_paths
from store.models import Report
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild

MB = 1 << 20


def documents(path, **limits):
    items = list(iter_documents(str(path), max_bytes=limits.pop("max_bytes", MB), max_depth=4,
                                **limits))
    return ([i for i in items if isinstance(i, Document)],
            [i.reason for i in items if isinstance(i, RefusedInput)])


def nested_zeros(size: int) -> bytes:
    """gzip(gzip(size zero bytes)): tiny, and each level multiplies what it costs to open."""
    inner = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = inner.compress(bytes(size)) + inner.flush()
    return gzip.compress(data, compresslevel=9, mtime=0)


def test_the_budget_refuses_a_declared_size_before_reading():
    budget = Budget(max_bytes=100, max_members=2)
    budget.open(60)
    budget.spend(50)
    with pytest.raises(BudgetSpent, match="declares more than 100 bytes"):
        budget.open(60)
    assert budget.spent


def test_members_of_nested_bombs_share_one_budget(tmp_path):
    bomb = nested_zeros(2 * MB)
    members = {"good.xml": xmlbuild.report_bytes(report_id="good")}
    members.update({f"bomb{n}.gz": bomb for n in range(50)})
    path = tmp_path / "bombs.zip"
    path.write_bytes(xmlbuild.zipped(members))
    docs, refused = documents(path, max_input_bytes=3 * MB, max_members=1000)
    assert [d.origin.rsplit(" ", 1)[-1] for d in docs] == ["good.xml"]
    # each bomb passes the per-member cap; the third one spends the file's budget, then nothing
    assert len(refused) == 3 and "RUA_MAX_INPUT_BYTES" in refused[-1]
    assert "the rest of it is not read" in refused[-1]


def test_a_zip_member_declaring_too_much_is_refused_unread(tmp_path):
    path = tmp_path / "big.zip"
    path.write_bytes(xmlbuild.zipped({"a.xml": xmlbuild.report_bytes(report_id="a"),
                                      "zeros.bin": bytes(4 * MB)}))
    docs, refused = documents(path, max_bytes=8 * MB, max_input_bytes=2 * MB)
    assert len(docs) == 1 and refused == [f"{path} » zeros.bin: the input file declares more "
                                          f"than {2 * MB} bytes in all (RUA_MAX_INPUT_BYTES); "
                                          "the rest of it is not read"]


def test_members_are_counted_across_levels(tmp_path):
    members = {f"r{n}.xml.gz": xmlbuild.gzipped(xmlbuild.report_bytes(report_id=f"r{n}"))
               for n in range(30)}
    path = tmp_path / "many.zip"
    path.write_bytes(xmlbuild.zipped(members))
    docs, refused = documents(path, max_members=10)
    assert len(docs) == 5       # a zip member and its gzip stream: two members each
    assert len(refused) == 1 and "more than 10 archive members" in refused[0]


def test_each_input_file_has_a_budget_of_its_own(tmp_path):
    for name in ("a", "b"):
        (tmp_path / f"{name}.zip").write_bytes(xmlbuild.zipped(
            {f"{name}{n}.xml": xmlbuild.report_bytes(report_id=f"{name}{n}") for n in range(3)}))
    docs, refused = documents(tmp_path, max_members=3)
    assert (len(docs), refused) == (6, [])


def test_good_reports_beside_a_bomb_are_stored(database, config, tmp_path):
    make_domain(make_org("Acme"), "example.com")
    bombs = tmp_path / "bombs.zip"
    bombs.write_bytes(xmlbuild.zipped({
        "first.xml": xmlbuild.report_bytes(report_id="first"),
        **{f"b{n}.gz": nested_zeros(2 * MB) for n in range(20)}}))
    good = tmp_path / "good.xml.gz"
    good.write_bytes(xmlbuild.gzipped(xmlbuild.report_bytes(report_id="beside")))
    config = config.replace(max_report_bytes=MB, max_input_bytes=3 * MB)
    results = list(ingest_paths([str(bombs), str(good)], config=config))
    assert [r.status for r in results] == ["refused", "stored"]
    assert len(results[0].refusals) == 3 and "RUA_MAX_INPUT_BYTES" in results[0].refusals[-1]
    assert sorted(r.report_id for r in Report.select()) == ["beside", "first"]
