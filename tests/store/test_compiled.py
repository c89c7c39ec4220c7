"""SQL built once (store/compiled.py) binds the values of each run, never the first run's."""
from __future__ import annotations

from store.compiled import Compiled
from store.models import Organization
from tests.factories import make_org


def test_a_compiled_query_binds_fresh_values_each_run(database):
    a, b = make_org(name="a"), make_org(name="b")
    by_name = Compiled(lambda name: Organization.select(Organization.id)
                       .where((Organization.name == name) & (Organization.plan != "none")).limit(1))
    assert by_name.run(name="a") == [(a.id,)]
    assert by_name.run(name="b") == [(b.id,)]
    assert by_name.run(name="a' OR '1'='1") == []
