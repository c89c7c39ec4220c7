"""The store's connection around each request: opened before it, given back after it."""
from __future__ import annotations

import threading

from flask import Flask, g
from peewee import SqliteDatabase

from store import db
from store.versioned import data_version


def open_for_request(app: Flask, ctx) -> None:
    """The request checks' first step: the request's connection (ctx is flask.g)."""
    app.extensions["rua.connections"](ctx)


def drop_failed(app: Flask) -> None:
    """After storage failed: the worker's own connection is closed, so the next request opens
    a fresh one (a connection a caller holds, e.g. a test, stays)."""
    app.extensions["rua.connections.drop"]()


def register(app: Flask, database) -> None:
    """Open a connection per request (after routing, see open_for_request) and give it back in
    teardown.

    SQLite keeps the connection it opened, one per worker thread, between requests: closing
    the last connection to a WAL database checkpoints and deletes the WAL, and the next write
    re-creates it. Postgres connections go back to the pool.
    """
    keep = isinstance(database, SqliteDatabase)
    kept = threading.local()

    def connect(ctx):
        if database.connect(reuse_if_open=True):
            ctx.rua_opened = True
            kept.connection = database.connection() if keep else None
        # What webapp caches (keys, snapshots) may reuse from earlier requests, read once here.
        ctx.store_version = data_version(database) if keep else None

    def own() -> bool:
        """The open connection is the one this worker keeps (SQLite)."""
        return (keep and not database.is_closed()
                and getattr(kept, "connection", None) is database.connection())

    def drop():
        if own():
            database.close()
            kept.connection = None

    def give_back(_exc):
        if database.is_closed():
            return
        # Only our own connection is closed (a caller, e.g. a test, may hold its own).
        if g.pop("rua_opened", False) and not keep:
            database.close()            # pooled: back to the pool
        elif database.in_transaction():
            database.rollback()         # never carry an open transaction into the next request

    app.extensions["rua.connections"] = connect
    app.extensions["rua.connections.drop"] = drop
    app.teardown_request(give_back)


def streamed(pieces):
    """A streamed body's pieces, made with the store connected: Flask runs teardown (which
    gives a pooled connection back) before the first piece is sent, so the stream takes one for
    its length and gives it back at the end, or when the client goes away."""
    opened = db.connect(reuse_if_open=True)       # False: SQLite's kept connection, left open
    try:
        yield from pieces
    finally:
        if opened and not db.is_closed():
            db.close()
