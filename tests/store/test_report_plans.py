"""Every filter and sort of GET /reports walks an index in its order, on SQLite and on Postgres.

SQLite's plan is read from EXPLAIN QUERY PLAN as it would run. Postgres chooses by table
statistics (a test's tables are nearly empty), so its plan is read with sequential scans and
sorts priced out: what it shows is then the best an index can do, a sort only if none serves.
Some of Postgres's indexes leave the tie-breaking id out (store/migrations.py REPORT_INDEXES):
it walks them in order and sorts each run of equal keys (an incremental sort), not the rows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import pytest
from peewee import SqliteDatabase

import store
from store import report_queries as queries
from store.models import Organization, Report
from store.report_queries import ReportFilter
from tests.factories import make_org


@dataclass(frozen=True)
class Plan:
    indexes: frozenset       # the indexes the plan reads
    sorts: bool              # a sort step after the reads (the order does not come from an index)
    sorts_ties: bool         # runs of equal leading keys sorted by the rest (Postgres)
    seeks: str               # the conditions the indexes are searched by
    covering: bool           # every column comes from an index, no table row is read


def plan(query) -> Plan:
    sql, params = query.sql()
    database = store.db.obj
    if isinstance(database, SqliteDatabase):
        details = [row[3] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params)]
        text = " | ".join(details)
        return Plan(indexes=frozenset(re.findall(r"INDEX (\w+)", text)),
                    sorts="TEMP B-TREE" in text,
                    sorts_ties=False,
                    seeks=" ".join(re.findall(r"INDEX \w+ \(([^)]*)\)", text)),
                    covering="COVERING INDEX" in text)
    with database.atomic():
        database.execute_sql("SET LOCAL enable_seqscan = off")
        database.execute_sql("SET LOCAL enable_sort = off")
        top = database.execute_sql("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()[0][0]
    nodes = list(_walk(top["Plan"]))
    return Plan(indexes=frozenset(n["Index Name"] for n in nodes if "Index Name" in n),
                sorts=any(n["Node Type"] == "Sort" for n in nodes),
                sorts_ties=any(n["Node Type"] == "Incremental Sort" for n in nodes),
                seeks=" ".join(n.get("Index Cond", "") for n in nodes),
                covering=all(n["Node Type"] == "Index Only Scan" for n in nodes
                             if "Relation Name" in n))


def _walk(node):
    yield node
    for child in node.get("Plans", ()):
        yield from _walk(child)


@pytest.mark.parametrize("sort_by", list(queries.REPORT_SORTS))
@pytest.mark.parametrize("descending", [True, False])
def test_every_sort_walks_an_index_without_sorting(database, sort_by, descending):
    walked = plan(queries.report_page("org", ReportFilter(sort_by=sort_by, descending=descending)))
    assert walked.indexes and not walked.sorts, walked


def test_a_domain_with_the_default_order_walks_its_own_index(database):
    org = _reports_of_domains(database, domains=20, days=40)
    walked = plan(queries.report_page(org, ReportFilter(domains=("d1.example",))))
    own = "report_org_domain_date_end_id" if _sqlite(database) else "report_org_domain_date_end"
    assert walked.indexes == {own} and not walked.sorts, walked


@pytest.mark.parametrize("descending", [True, False])
def test_a_domains_failing_reports_by_compliance_use_the_partial_index(database, descending):
    if not _sqlite(database):
        pytest.skip("Postgres keeps no such index: it sorts a domain's failing reports "
                    "(bench/report_sorts.py)")
    wanted = ReportFilter(domains=("example.com",), result="fail", sort_by="compliance",
                          descending=descending)
    page = plan(queries.report_page("org", wanted))
    assert page.indexes == {"report_failing_org_domain_compliance_rate_id"} and not page.sorts
    count = plan(Report.select().where(queries._report_conditions("org", wanted)))
    assert count.indexes == {"report_failing_org_domain_compliance_rate_id"}


def _sqlite(database) -> bool:
    return isinstance(database, SqliteDatabase)


def _reports_of_domains(database, domains: int, days: int) -> str:
    """The id of a new organization holding a report a day for each of `domains` domains, with
    Postgres's statistics of them taken (it plans by them)."""
    org = make_org()
    first = date(2026, 1, 1)
    rows = []
    for number in range(domains):
        for offset in range(days):
            day = first + timedelta(days=offset)
            begin = int(datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp())
            rows.append(dict(org=org.id, dedupe_key=f"{number}-{offset}", org_name="google.com",
                             report_id=f"{number}-{offset}", date_begin=begin,
                             date_end=begin + 86400, day_begin=day, day_end=day,
                             domain=f"d{number}.example"))
    Report.insert_many(rows).execute()
    if not _sqlite(database):
        database.execute_sql('ANALYZE "report"')
    return org.id


def test_passing_reports_by_compliance_seek_the_rate_of_100(database):
    walked = plan(queries.report_page("org", ReportFilter(result="pass", sort_by="compliance")))
    assert re.search(r"compliance_rate ?= ?", walked.seeks) and not walked.sorts, walked


def test_a_to_date_bounds_the_walk_over_date_end(database):
    walked = plan(queries.report_page("org", ReportFilter(day_to=date(2024, 1, 5))))
    assert re.search(r"date_end ?<", walked.seeks) and not walked.sorts, walked


def test_the_report_version_is_one_probe_of_the_organizations_key(database):
    walked = plan(Organization.select(Organization.report_version)
                  .where(Organization.id == "org"))
    assert walked.indexes and "id" in walked.seeks and not walked.sorts, walked
