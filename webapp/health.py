"""GET /domains/{domain}/health: one monitored domain's health (the heavy route)."""
from __future__ import annotations

from flask import Blueprint, g

from store.compiled import Compiled
from store.models import Domain
from store.versioned import VersionCache
from webapp import params
from webapp.auth import requires
from webapp.snapshot_answers import fetch, serve
from webapp.errors import ApiError

bp = Blueprint("health", __name__)

_MONITORED = Compiled(lambda org_id, name: Domain.select(Domain.id)
                      .where(Domain.org == org_id, Domain.name == name).limit(1))
# (org, domain) -> monitored, known while the store is unchanged (store/versioned.py).
_MONITORED_KNOWN = VersionCache()


@bp.get("/domains/<path:domain>/health")
@requires("domain:read")
def show(domain):
    name = params.domain(domain)
    # Checked on every request, not only when the snapshot is missing: a domain removed since
    # the last refresh must not keep answering from its old snapshot.
    if not monitored(g.principal.org_id, name, g.store_version):
        raise ApiError(404, "domain_not_monitored")
    return serve(fetch("health", name))


def monitored(org_id: str, name: str, version) -> bool:
    """The organization monitors the domain; kept while the store's version holds."""
    return _MONITORED_KNOWN.get(version, (org_id, name),
                                lambda: bool(_MONITORED.run(org_id=org_id, name=name)))
