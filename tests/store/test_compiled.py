"""SQL built once (store/compiled.py) binds the values of each run, never the first run's."""
from __future__ import annotations

import pytest
from peewee import fn

from store import db, is_postgres
from store.compiled import Compiled, run_prepared
from store.models import Organization, Source
from tests.factories import make_org


def test_a_compiled_query_binds_fresh_values_each_run(database):
    a, b = make_org(name="a"), make_org(name="b")
    by_name = Compiled(lambda name: Organization.select(Organization.id)
                       .where((Organization.name == name) & (Organization.plan != "none")).limit(1))
    assert by_name.run(name="a") == [(a.id,)]
    assert by_name.run(name="b") == [(b.id,)]
    assert by_name.run(name="a' OR '1'='1") == []


def test_a_prepared_query_binds_fresh_values_each_run_and_survives_a_rollback(database):
    a, b = make_org(name="a"), make_org(name="b")
    by_name = Compiled(lambda name: Organization.select(Organization.id)
                       .where(Organization.name == name), prepared=True)
    with pytest.raises(ZeroDivisionError), db.atomic():
        assert by_name.run(name="a") == [(a.id,)]
        raise ZeroDivisionError           # the transaction that prepared it is rolled back
    assert by_name.run(name="b") == [(b.id,)]
    assert by_name.run(name="a' OR '1'='1") == []
    if is_postgres():
        prepared = db.execute_sql("SELECT count(*) FROM pg_prepared_statements "
                                  "WHERE statement LIKE '%%organization%%'").fetchone()[0]
        assert prepared == 1


def test_a_prepared_statement_keeps_a_float_a_float(database):
    """Postgres would give an untyped value the type of the column it meets: 100.0 times an
    integer count would divide as integers."""
    make_org(name="a")
    share = Compiled(lambda name: Organization.select(100.0 * fn.LENGTH(Organization.name) / 3)
                     .where(Organization.name == name), prepared=True)
    assert share.run(name="a") == [(pytest.approx(100.0 / 3),)]


def test_run_prepared_runs_a_statement_of_any_length(database):
    org = make_org()
    text = ('SELECT "ip" FROM "source" WHERE "org_id" = %s' if is_postgres()
            else 'SELECT "ip" FROM "source" WHERE "org_id" = ?')
    assert run_prepared(text, [org.id]).fetchall() == []
    assert Source.select().count() == 0
