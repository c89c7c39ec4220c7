"""Answers from snapshot blobs: the stored bytes with ETag and Last-Modified (304 when unchanged).

A missing or stale blob is computed by the snapshotter's own refresh, inside one of the plan's
overview concurrency slots (shared by every worker and host); over the cap: 503 busy.
"""
from __future__ import annotations

import functools
from datetime import timezone

from flask import Response, current_app, g, request
from werkzeug.http import http_date, quote_etag

from snapshotter import freshness, jobs, locks
from store import snapshots
from store.compiled import Compiled
from store.models import Domain, DomainDay, Organization
from store.versioned import Versioned
from webapp.errors import ApiError

OVERVIEW_CAP = {"free": 2, "team": 4, "unlimited": 8}


# The request headers that can make an answer 304 or 412; without any, it is a plain 200.
CONDITIONS = ("HTTP_IF_NONE_MATCH", "HTTP_IF_MODIFIED_SINCE", "HTTP_IF_MATCH",
              "HTTP_IF_UNMODIFIED_SINCE")


def respond(body: bytes, etag: str | None = None, computed_at=None) -> Response:
    """The bytes as given, validators attached; 304 when the client's copy is current."""
    response = Response(body, mimetype="application/json",
                        headers=list(_validators(etag or snapshots.etag_of(body), computed_at)))
    environ = request.environ
    if any(name in environ for name in CONDITIONS):
        return response.make_conditional(request)
    # Without conditions make_conditional has nothing to do but add a Date field, which the
    # server sends anyway (gunicorn always does); its date parsing and header look-ups cost a
    # fifth of a blob answer. A HEAD drops the body later as ever.
    return response


@functools.lru_cache(maxsize=1024)
def _validators(etag: str, computed_at) -> tuple:
    """A blob's own headers, formatted once per blob (served many times until replaced)."""
    headers = [("ETag", quote_etag(etag))]
    if computed_at is not None:
        headers.append(("Last-Modified", http_date(computed_at.replace(tzinfo=timezone.utc))))
    return (*headers, ("Cache-Control", "private, no-cache"), ("Vary", "Authorization"))


def serve(blob: snapshots.Blob) -> Response:
    return respond(blob.body, blob.etag, blob.computed_at)


# Blobs by (org, kind, variant) and each org's dirty mark, held while the store is unchanged.
_HELD = Versioned()


def fetch(kind: str, variant: str = "", *, exists=None) -> snapshots.Blob | None:
    """The organization's blob, computed first when missing or stale; None when it is missing
    and exists() says the variant has nothing to compute (an unknown domain)."""
    org_id, now, version = g.principal.org_id, g.now, g.get("store_version")
    blob = _HELD.get(version, (org_id, kind, variant), lambda: snapshots.get(org_id, kind, variant))
    if blob is not None and (
            freshness.young(kind, blob.computed_at, now)
            # Asked only of a blob past its tolerance; held in a tuple, as "never dirty" is None.
            or not freshness.stale(kind, blob.computed_at,
                                   _HELD.get(version, org_id, lambda: (_dirty_since(org_id),))[0],
                                   now)):
        return blob
    if blob is None and exists is not None and not exists():
        return None
    return _compute(kind, variant, blob)


def _compute(kind: str, variant: str, stale_blob):
    org_id, now, config = g.principal.org_id, g.now, current_app.config["RUA"]
    cap = OVERVIEW_CAP.get(g.principal.plan, OVERVIEW_CAP["free"])
    with locks.slot(f"overview.{org_id}", cap, config.lock_dir) as number:
        if number is None:
            if stale_blob is not None:
                return stale_blob     # busy: an older answer beats none
            raise ApiError(503, "busy", headers={"Retry-After": "1"})
        jobs.refresh_org(org_id, now, report_address=config.report_address)
    return snapshots.get(org_id, kind, variant)


# Asked on every answer from a blob older than its tolerance (most of them, on a quiet
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
