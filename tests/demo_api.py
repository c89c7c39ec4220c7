"""The demo store (`rua demo`) served by a real gunicorn: what a user of the API meets."""
from __future__ import annotations

import contextlib

from store.models import Member, Organization
from tests.factories import make_key
from tests.servers import running_gunicorn

DEMO_DAYS = "30"


def demo_keys(rua, count: int = 1) -> list[str]:
    """Load the demo organization with `rua demo` and return its key and count-1 more read keys
    of its owner (each key has its own abuse window)."""
    result = rua("demo", "--days", DEMO_DAYS)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    org = Organization.get(Organization.name == "Demo")
    owner = Member.get(Member.org == org, Member.role == "owner")
    more = [make_key(org, member=owner)[1] for _ in range(count - 1)]
    return [result.stdout.splitlines()[-1], *more]


def unmetered_demo() -> None:
    """The demo organization on the uncapped plan: a long run spends no hourly or heavy budget
    (the abuse limit per key still applies)."""
    Organization.update(plan="unlimited").where(Organization.name == "Demo").execute()


@contextlib.contextmanager
def served_demo(config, tmp_path, **settings):
    """gunicorn (two workers) over the test's store: yields the API base URL."""
    log = tmp_path / "gunicorn.log"
    settings = {"RUA_WORKERS": "2", **settings}
    with running_gunicorn(config, log, "--access-logfile", "/dev/null", **settings) as (base, _):
        yield base
    assert "Traceback" not in log.read_text()
