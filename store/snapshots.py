"""Snapshot blobs: a precomputed JSON body per (org, kind, variant), served as stored."""
from __future__ import annotations

import functools
import hashlib
import operator
from dataclasses import dataclass
from datetime import datetime

from peewee import EXCLUDED, Tuple

from store import db
from store.encoding import dumps
from store.models import Snapshot


DAY_TOTALS = "day_totals"    # the snapshotter's private cache of day totals; never served


@dataclass(frozen=True)
class Blob:
    body: bytes
    etag: str            # sha256 of body, hex
    computed_at: datetime
    shape: str = ""      # the version of the body's shape (shapes/versions.py); "" for caches


def etag_of(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def encode(doc) -> bytes:
    """orjson bytes of a document; bytes pass through (series are built as bytes)."""
    return doc if isinstance(doc, (bytes, bytearray)) else dumps(doc)


_GET_SQL: dict = {}


def get(org_id: str, kind: str, variant: str = "") -> Blob | None:
    """The stored blob, or None. Every API answer from a blob starts here, so the statement is
    generated once per kind of database and then only executed."""
    sql = _GET_SQL.get(type(db.obj))
    if sql is None:
        query = (Snapshot.select(Snapshot.body, Snapshot.etag, Snapshot.computed_at,
                                 Snapshot.shape)
                 .where(Snapshot.org == "", Snapshot.kind == "", Snapshot.variant == "").limit(1))
        sql = _GET_SQL[type(db.obj)] = query.sql()[0]
    row = db.execute_sql(sql, (org_id, kind, variant, 1)).fetchone()
    if row is None:
        return None
    computed_at = row[2]
    if isinstance(computed_at, str):      # SQLite hands back the text peewee stored
        computed_at = Snapshot.computed_at.python_value(computed_at)
    return Blob(bytes(row[0]), row[1], computed_at, row[3])


def put(org_id: str, kind: str, variant: str, doc, now: datetime) -> Blob:
    """Store one blob (insert or replace)."""
    return put_many(org_id, {(kind, variant): doc}, now)[(kind, variant)]


def put_many(org_id: str, docs: dict, now: datetime, *, whole_kinds: bool = True,
             shapes=None) -> dict:
    """Store blobs keyed (kind, variant) in one transaction (keep the docs to a few hundred).
    whole_kinds: every blob of the kinds given is marked computed `now` (a refresh of all of
    them); False marks only the blobs given. shapes: each kind's shape version (others get "")."""
    shapes = shapes or {}
    blobs = {key: Blob(body, etag_of(body), now, shapes.get(key[0], ""))
             for key, body in ((key, bytes(encode(doc))) for key, doc in docs.items())}
    rows = [(org_id, kind, variant, blob.body, blob.etag, now, blob.shape)
            for (kind, variant), blob in blobs.items()]
    fields = [Snapshot.org, Snapshot.kind, Snapshot.variant, Snapshot.body, Snapshot.etag,
              Snapshot.computed_at, Snapshot.shape]
    kinds = sorted({kind for kind, _ in blobs})
    # Read before the transaction: on SQLite a transaction that reads and then writes fails at
    # once (SQLITE_BUSY) when another process wrote in between, instead of waiting its turn.
    query = (Snapshot.select(Snapshot.kind, Snapshot.variant, Snapshot.etag, Snapshot.shape)
             .where(Snapshot.org == org_id, Snapshot.kind.in_(kinds)).tuples())
    if not whole_kinds:       # a few blobs among maybe thousands of their kinds: those alone
        query = query.where(Snapshot.variant.in_(sorted({v for _, v in blobs})))
    stored = {(k, v): (e, s) for k, v, e, s in query}
    unchanged = {key for key, blob in blobs.items() if stored.get(key) == (blob.etag, blob.shape)}
    rows = [row for row in rows if (row[1], row[2]) not in unchanged]
    with db.atomic():
        # Unchanged bodies are not written again; their computed_at becomes this refresh's time.
        if whole_kinds:
            (Snapshot.update(computed_at=now)
             .where(Snapshot.org == org_id, Snapshot.kind.in_(kinds)).execute())
        else:
            keys = sorted(unchanged)
            for start in range(0, len(keys), 200):
                (Snapshot.update(computed_at=now)
                 .where(Snapshot.org == org_id, Tuple(Snapshot.kind, Snapshot.variant)
                        .in_(keys[start:start + 200])).execute())
        # Upserts, not delete-and-insert: two refreshes of one organization at once stay harmless.
        for start in range(0, len(rows), 200):
            (Snapshot.insert_many(rows[start:start + 200], fields=fields)
             .on_conflict(conflict_target=[Snapshot.org, Snapshot.kind, Snapshot.variant],
                          update={Snapshot.body: EXCLUDED.body, Snapshot.etag: EXCLUDED.etag,
                                  Snapshot.computed_at: EXCLUDED.computed_at,
                                  Snapshot.shape: EXCLUDED.shape})
             .execute())
    return blobs


def orgs_with_other_shapes(versions: dict) -> list[str]:
    """The organizations holding a blob of a kind in `versions` (kind -> shape version) stored
    under another version."""
    other = functools.reduce(operator.or_, ((Snapshot.kind == kind) & (Snapshot.shape != version)
                                            for kind, version in sorted(versions.items())))
    query = Snapshot.select(Snapshot.org).where(other).distinct().order_by(Snapshot.org)
    return [org_id for (org_id,) in query.tuples()]


def prune(org_id: str, kept: dict) -> int:
    """Remove every blob of each kind in `kept` whose variant is not in kept[kind] (a domain
    that left the organization loses its blobs); the number removed."""
    removed = 0
    stored = {}
    for kind, variant in (Snapshot.select(Snapshot.kind, Snapshot.variant)
                          .where(Snapshot.org == org_id, Snapshot.kind.in_(sorted(kept))).tuples()):
        stored.setdefault(kind, set()).add(variant)
    for kind, variants in sorted(kept.items()):
        gone = sorted(stored.get(kind, set()) - set(variants))
        for start in range(0, len(gone), 200):
            removed += (Snapshot.delete()
                        .where(Snapshot.org == org_id, Snapshot.kind == kind,
                               Snapshot.variant.in_(gone[start:start + 200])).execute())
    return removed


def remove(org_id: str, kind: str) -> int:
    return Snapshot.delete().where(Snapshot.org == org_id, Snapshot.kind == kind).execute()
