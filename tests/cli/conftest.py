"""Fixtures for the admin command tests: run `rua` against the test database, and one organization."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from cli import main
from store import db
from tests.factories import make_member, make_org


@pytest.fixture
def rua(database, config):
    """Run `rua ARGS…` with RUA_DATABASE_URL set to the test database; return click's Result."""
    runner = CliRunner()

    def invoke(*args, url=None):
        result = runner.invoke(main, [str(a) for a in args],
                               env={"RUA_DATABASE_URL": url or config.database_url})
        db.initialize(database)  # the command pointed the shared proxy at its own connection
        return result
    return invoke


@pytest.fixture
def acme(database):
    """The organization "Acme" with one admin, ana@example.com."""
    org = make_org("Acme")
    make_member(org, email="ana@example.com", role="admin")
    return org
