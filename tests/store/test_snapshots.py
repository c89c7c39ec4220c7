"""Snapshot blobs carry their shape's version, written with the body and read back with it."""
from __future__ import annotations

import datetime

from store import snapshots
from tests.factories import make_org

NOW = datetime.datetime(2026, 3, 1, 12, 0, 0)


def test_each_blob_carries_its_kinds_shape_version_and_others_none(database):
    org = make_org()
    snapshots.put_many(org.id, {("overview", ""): {"a": 1}, ("cache", ""): {"b": 2}}, NOW,
                       shapes={"overview": "0123456789ab"})
    assert snapshots.get(org.id, "overview").shape == "0123456789ab"
    assert snapshots.get(org.id, "cache").shape == ""


def test_an_unchanged_body_under_a_new_shape_version_takes_that_version(database):
    org = make_org()
    snapshots.put_many(org.id, {("overview", ""): {"a": 1}}, NOW, shapes={"overview": "old"})
    later = NOW + datetime.timedelta(hours=1)
    snapshots.put_many(org.id, {("overview", ""): {"a": 1}}, later, shapes={"overview": "new"})
    blob = snapshots.get(org.id, "overview")
    assert (blob.shape, blob.computed_at, blob.body) == ("new", later, b'{"a":1}')


def test_the_organizations_holding_a_blob_of_another_shape_are_found(database):
    current, older, cache_only = make_org(), make_org(), make_org()
    shapes = {"overview": "v2", "health": "h2"}
    snapshots.put_many(current.id, {("overview", ""): {}, ("health", "a.example"): {}}, NOW,
                       shapes=shapes)
    snapshots.put_many(older.id, {("overview", ""): {}, ("health", "a.example"): {}}, NOW,
                       shapes={"overview": "v2", "health": "h1"})
    snapshots.put_many(cache_only.id, {("day_totals", ""): {}}, NOW)
    assert snapshots.orgs_with_other_shapes(shapes) == [older.id]
