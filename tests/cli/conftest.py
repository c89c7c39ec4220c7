"""Fixtures for the admin command tests: run `rua` against the test database, and one organization."""
from __future__ import annotations

import pytest

from tests.factories import make_member, make_org


@pytest.fixture
def acme(database):
    """The organization "Acme" with one admin, ana@example.com."""
    org = make_org("Acme")
    make_member(org, email="ana@example.com", role="admin")
    return org
