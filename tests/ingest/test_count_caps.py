"""Forged counts are refused while parsing, so a day's sums never overflow and the genuine
report of the same domain and day is stored, on SQLite and on Postgres alike."""
import pytest

from ingest.pipeline import ingest_paths
from store.models import DailyRollup, DomainDay, Report, Source, TlsDay, TlsReport
from tests.factories import make_domain, make_org
from tests.ingest import tlsbuild as tb
from tests.ingest import xmlbuild as xb


@pytest.fixture
def acme(database):
    org = make_org("Acme")
    make_domain(org, "example.com")
    return org


def ingest(tmp_path, config, files: dict[str, bytes]):
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return list(ingest_paths([str(tmp_path / name) for name in files], config=config))


def test_a_genuine_dmarc_report_after_two_forged_giant_ones_is_stored(acme, tmp_path, config):
    results = ingest(tmp_path, config, {
        "forged1.xml": xb.report_bytes([xb.record(count=2 ** 62 - 1)], report_id="f1"),
        "forged2.xml": xb.report_bytes([xb.record(count=2 ** 62)], report_id="f2"),
        "genuine.xml": xb.report_bytes([xb.record(count=7)], report_id="g"),
    })
    assert [r.status for r in results] == ["refused", "refused", "stored"]
    assert all("(RUA_MAX_REPORT_MESSAGES)" in r.error for r in results[:2])
    assert [r.report_id for r in Report.select()] == ["g"]
    assert [d.messages for d in DomainDay.select()] == [7]
    assert [r.messages for r in DailyRollup.select()] == [7]
    assert [s.messages for s in Source.select()] == [7]


def test_a_genuine_tls_report_after_two_forged_giant_ones_is_stored(acme, tmp_path, config):
    results = ingest(tmp_path, config, {
        "forged1.json": tb.report_bytes([tb.policy(successful=2 ** 62 - 1)], report_id="f1"),
        "forged2.json": tb.report_bytes([tb.policy(successful=2 ** 62)], report_id="f2"),
        "genuine.json": tb.report_bytes([tb.policy(successful=90, failed=10,
                                                   failures={"certificate-expired": 10})],
                                        report_id="g"),
    })
    assert [r.status for r in results] == ["refused", "refused", "stored"]
    assert all("(RUA_MAX_REPORT_SESSIONS)" in r.error for r in results[:2])
    assert [r.report_id for r in TlsReport.select()] == ["g"]
    [day] = TlsDay.select()
    assert (day.successful_sessions, day.failed_sessions) == (90, 10)
    assert day.failures == {"certificate-expired": 10}


def test_a_domains_day_keeps_its_result_types_to_the_cap(acme, tmp_path, config):
    files = {f"t{n}.json": tb.report_bytes([tb.policy(failed=4, failures={
        **tb.kinds(3, start=3 * n), "certificate-expired": 1})], report_id=f"t{n}")
        for n in range(3)}
    results = ingest(tmp_path, config.replace(max_result_types=5), files)
    assert [r.status for r in results] == ["stored"] * 3
    [day] = TlsDay.select()
    assert day.failures == {"type-0": 1, "type-1": 1, "type-2": 1, "certificate-expired": 3,
                            "type-3": 1, "other": 5}


def test_reports_at_the_caps_sum_exactly(acme, tmp_path, config):
    cap = config.max_report_messages
    results = ingest(tmp_path, config, {
        f"r{n}.xml": xb.report_bytes([xb.record(count=cap)], report_id=f"r{n}") for n in range(3)
    } | {f"t{n}.json": tb.report_bytes([tb.policy(successful=cap)], report_id=f"t{n}")
         for n in range(3)})
    assert [r.status for r in results] == ["stored"] * 6
    assert [d.messages for d in DomainDay.select()] == [3 * cap]
    assert [d.successful_sessions for d in TlsDay.select()] == [3 * config.max_report_sessions]


def test_no_hostile_value_is_an_unexpected_error(acme, tmp_path, config):
    start = tb.report_bytes()[:-1]
    results = ingest(tmp_path, config, {
        "nan.json": start + b', "x": NaN}',
        "big.json": start + b', "x": 1e999}',
        "surrogate.json": start + b', "x": "\\udc00"}',
        "nul.json": start + b', "x": "\\u0000"}',
        "late.json": tb.report_bytes(end="9999-12-31T23:59:59-12:00"),
        "late.xml": xb.report_bytes(end=10 ** 12),
        "huge.xml": xb.report_bytes(begin="1" * 5000),
    })
    assert [r.status for r in results] == ["refused"] * 7
    assert not [r.error for r in results if "unexpected error" in r.error]
    assert TlsReport.select().count() == Report.select().count() == 0
