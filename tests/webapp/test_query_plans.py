"""Every filter and sort of GET /reports is served by an index (SQLite's query plans)."""
from __future__ import annotations

from datetime import date

import pytest

import store
from store import report_queries as queries
from store.report_queries import ReportFilter


def _plan(query) -> str:
    sql, params = query.sql()
    return " | ".join(row[3] for row in store.db.obj.execute_sql("EXPLAIN QUERY PLAN " + sql, params))


@pytest.fixture
def sqlite_only(database, config):
    if not config.is_sqlite:
        pytest.skip("SQLite query plans")


@pytest.mark.parametrize("sort_by", list(queries.REPORT_SORTS))
@pytest.mark.parametrize("descending", [True, False])
def test_every_sort_walks_an_index_without_sorting(sqlite_only, sort_by, descending):
    plan = _plan(queries.report_page("org", ReportFilter(sort_by=sort_by, descending=descending)))
    assert "USING" in plan and "TEMP B-TREE" not in plan, plan


def test_a_domain_with_the_default_order_walks_its_own_index(sqlite_only):
    plan = _plan(queries.report_page("org", ReportFilter(domains=("example.com",))))
    assert "report_org_domain_date_end_id" in plan and "TEMP B-TREE" not in plan, plan


@pytest.mark.parametrize("descending", [True, False])
def test_a_domains_failing_reports_by_compliance_use_the_partial_index(sqlite_only, descending):
    wanted = ReportFilter(domains=("example.com",), result="fail", sort_by="compliance", descending=descending)
    assert "report_failing_org_domain_compliance_rate_id" in _plan(queries.report_page("org", wanted))
    count = store.models.Report.select().where(queries._report_conditions("org", wanted))
    assert "report_failing_org_domain_compliance_rate_id" in _plan(count)


def test_passing_reports_by_compliance_seek_the_rate_of_100(sqlite_only):
    plan = _plan(queries.report_page("org", ReportFilter(result="pass", sort_by="compliance")))
    assert "compliance_rate=?" in plan, plan


def test_a_to_date_bounds_the_walk_over_date_end(sqlite_only):
    plan = _plan(queries.report_page("org", ReportFilter(day_to=date(2024, 1, 5))))
    assert "date_end<?" in plan, plan


def test_the_stamp_reads_a_covering_index(sqlite_only):
    query = store.models.DomainDay.select(store.models.fn.SUM(store.models.DomainDay.reports)).where(
        store.models.DomainDay.org == "org")
    assert "COVERING INDEX" in _plan(query)


def test_a_compiled_query_binds_fresh_values_each_run(database):
    from store.compiled import Compiled
    from store.models import Organization
    from tests.factories import make_org
    a, b = make_org(name="a"), make_org(name="b")
    by_name = Compiled(lambda name: Organization.select(Organization.id)
                       .where((Organization.name == name) & (Organization.plan != "none")).limit(1))
    assert by_name.run(name="a") == [(a.id,)]
    assert by_name.run(name="b") == [(b.id,)]
    assert by_name.run(name="a' OR '1'='1") == []
