"""Usage errors found by click take the CLI's one-line form: `rua: error: …`, status 2."""
from __future__ import annotations

import pytest

from tests.cli.outcome import assert_refused


@pytest.mark.parametrize("args, message", [
    (("ingest",), "missing argument 'PATH...' (see `main ingest --help`)"),
    (("key", "create", "Acme"), "missing option '--member' (see `main key create --help`)"),
    (("bogus",), "no such command 'bogus' (see `main --help`)"),
    (("--bogus",), "no such option '--bogus' (see `main --help`)"),
    (("demo", "--days", "0"), "invalid value for '--days': 0 is not in the range"),
])
def test_a_usage_error_is_one_line_with_a_hint_to_help(rua, args, message):
    result = rua(*args)
    assert_refused(result, message)
    assert "Usage:" not in result.stderr and "Try '" not in result.stderr


def test_the_bare_group_still_answers_with_its_help(rua):
    result = rua("org")
    assert "Usage:" in result.output and "create" in result.output
