"""What a `rua` run should look like: success with its lines, or one error line and status 2."""
from __future__ import annotations


def assert_refused(result, *fragments):
    """Exit status 2, one `rua: error:` line on stderr naming the problem, nothing on stdout."""
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rua: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert result.stdout == ""


def ok(result) -> list[str]:
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout.splitlines()
