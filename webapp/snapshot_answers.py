"""Answers from snapshots: the stored bytes with ETag and Last-Modified (304 when unchanged).

A missing or stale snapshot is computed alone (that one body: a domain's from its own facts, the
organization's from the stored per-domain ones), inside one of the plan's overview concurrency
slots (shared by every worker and host); over the cap: 503 busy. Refreshing the whole
organization is the snapshotter's work, never a request's.
"""
from __future__ import annotations

import functools
from datetime import timezone

from flask import Response, current_app, g, request
from werkzeug.http import http_date, quote_etag

from snapshotter import freshness, jobs
from store import locks
from store import snapshots
from store.compiled import Compiled
from store.models import Domain, DomainDay, Organization
from store.versioned import VersionCache
from webapp.errors import ApiError

# The request headers that can make an answer 304 or 412; without any, it is a plain 200.
CONDITIONS = ("HTTP_IF_NONE_MATCH", "HTTP_IF_MODIFIED_SINCE", "HTTP_IF_MATCH",
              "HTTP_IF_UNMODIFIED_SINCE")


def respond(body: bytes, etag: str | None = None, computed_at=None) -> Response:
    """The bytes as given, validators attached; 304 when the client's copy is current."""
    response = Response(body, headers=headers(body, etag, computed_at))
    environ = request.environ
    if any(name in environ for name in CONDITIONS):
        return response.make_conditional(request)
    # Without conditions make_conditional would only add a Date field, which gunicorn sends
    # anyway. A HEAD drops the body later as ever.
    return response


def headers(body: bytes, etag: str | None = None, computed_at=None) -> list:
    """The headers of a 200 answer with these bytes (a new list the caller may extend)."""
    return [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
            *_validators(etag or snapshots.etag_of(body), computed_at)]


@functools.lru_cache(maxsize=1024)
def _validators(etag: str, computed_at) -> tuple:
    """A snapshot's own headers, formatted once per snapshot (served many times until replaced)."""
    fields = [("ETag", quote_etag(etag))]
    if computed_at is not None:
        fields.append(("Last-Modified", http_date(computed_at.replace(tzinfo=timezone.utc))))
    return (*fields, ("Cache-Control", "private, no-cache"), ("Vary", "Authorization"))


def serve(snapshot: snapshots.Blob) -> Response:
    return respond(snapshot.body, snapshot.etag, snapshot.computed_at)


# Snapshots by (org, kind, variant) and each org's dirty mark, known while the store is unchanged.
_KNOWN = VersionCache()


def fetch(kind: str, variant: str = "", *, exists=None) -> snapshots.Blob | None:
    """The organization's snapshot, computed first when missing or stale; None when it is
    missing and exists() says the variant has nothing to compute (an unknown domain)."""
    org_id, now, version = g.principal.org_id, g.now, g.get("store_version")
    found = stored(org_id, kind, variant, version)
    if found is not None and fresh(org_id, kind, found, now, version):
        return found
    if found is None and exists is not None and not exists():
        return None
    return _compute(kind, variant, found)


def stored(org_id: str, kind: str, variant: str, version) -> snapshots.Blob | None:
    """The stored snapshot, fresh or not; None when there is none or it has another shape than
    its kind's now (it may lack a field the document promises). Kept while the store's version
    holds (store/versioned.py)."""
    return _KNOWN.get(version, (org_id, kind, variant),
                      lambda: _of_current_shape(snapshots.get(org_id, kind, variant), kind))


def _of_current_shape(snapshot: snapshots.Blob | None, kind: str) -> snapshots.Blob | None:
    if snapshot is None or snapshot.shape != jobs.SHAPE_VERSIONS[kind]:
        return None
    return snapshot


def fresh(org_id: str, kind: str, snapshot: snapshots.Blob, now, version) -> bool:
    """Young, or nothing changed after it beyond the kind's tolerance (the organization's dirty
    mark, asked only of an older one, is kept like the snapshot)."""
    if freshness.young(kind, snapshot.computed_at, now):
        return True
    # The dirty mark is kept in a tuple, as "never dirty" is None.
    mark = _KNOWN.get(version, org_id, lambda: (_dirty_since(org_id),))[0]
    return not freshness.stale(kind, snapshot.computed_at, mark, now)


def _compute(kind: str, variant: str, stale):
    org_id, now, config = g.principal.org_id, g.now, current_app.config["RUA"]
    slots = g.quota.plan.overview_slots
    with locks.slot(f"overview.{org_id}", slots, config.lock_dir) as number:
        if number is None:
            if stale is not None:
                return stale          # busy: an older answer beats none
            raise ApiError(503, "busy", headers={"Retry-After": "1"})
        return jobs.refresh_one(org_id, kind, variant, now, config, stale)


# Asked on every answer from a snapshot older than its tolerance (most of them, on a quiet
# organization): its SQL is built once.
_DIRTY_SINCE = Compiled(lambda org_id: Organization.select(Organization.dirty_since)
                        .where(Organization.id == org_id))


def _dirty_since(org_id: str):
    rows = _DIRTY_SINCE.run(org_id=org_id)
    return Organization.dirty_since.python_value(rows[0][0]) if rows else None


def org_has_domain(org_id: str, name: str) -> bool:
    """The domain is monitored by the organization or named by one of its reports."""
    return (Domain.select().where(Domain.org == org_id, Domain.name == name).exists()
            or DomainDay.select().where(DomainDay.org == org_id, DomainDay.domain == name).exists())
