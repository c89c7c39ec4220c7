"""The store's connection around each request: opened before it, kept for the next one."""
from __future__ import annotations

import select
import threading
import time

from flask import Flask, g
from peewee import SqliteDatabase

from store import db
from store.versioned import data_version

# A Postgres connection a worker keeps is given up after this long, as the pool gives up its
# own (store.make_database's stale_timeout), so no server process lives for ever.
KEEP_FOR = 300


def open_for_request(app: Flask, ctx) -> None:
    """The request checks' first step: the request's connection (ctx is flask.g)."""
    app.extensions["rua.connections"](ctx)


def drop_failed(app: Flask) -> None:
    """After storage failed: the worker's own connection is closed, so the next request opens
    a fresh one (a connection a caller holds, e.g. a test, stays)."""
    app.extensions["rua.connections.drop"]()


def lost(connection) -> bool:
    """True when a kept Postgres connection cannot serve another request: closed, not idle, or
    with something to read while no query runs (the server ended it, e.g. on a restart). The
    pool would ask with a `SELECT 1`, a round trip on every request; this asks the socket."""
    if connection.closed or connection.get_transaction_status() != 0:    # 0: idle
        return True
    readable, _, _ = select.select([connection.fileno()], [], [], 0)
    return bool(readable)


def register(app: Flask, database) -> None:
    """Open a connection for a request (after routing, see open_for_request) and keep it for
    the next request of the same worker thread.

    SQLite keeps one per thread: closing the last connection to a WAL database checkpoints and
    deletes the WAL, and the next write re-creates it. Postgres: a connection taken from the
    pool is checked with a round trip each time, so the process's main thread (a sync gunicorn
    worker's, which serves every request) keeps its own, checked on its socket (lost) and given
    up when the server ended it or after KEEP_FOR seconds; other threads, which may not live
    as long, give theirs back to the pool after each request.
    """
    sqlite = isinstance(database, SqliteDatabase)
    kept = threading.local()

    def keeps() -> bool:
        return sqlite or threading.current_thread() is threading.main_thread()

    def connect(ctx):
        if not sqlite and own() and (lost(database.connection())
                                     or time.monotonic() - kept.since > KEEP_FOR):
            give_up()
        if database.connect(reuse_if_open=True):
            ctx.rua_opened = True
            if keeps():
                kept.connection, kept.since = database.connection(), time.monotonic()
        # What webapp caches (keys, snapshots) may reuse from earlier requests, read once here.
        ctx.store_version = data_version(database) if sqlite else None

    def own() -> bool:
        """The open connection is the one this worker thread keeps."""
        return (not database.is_closed()
                and getattr(kept, "connection", None) is database.connection())

    def give_up():
        """Close the kept connection for good (a pooled one is not given back to the pool)."""
        if sqlite:
            database.close()
        else:
            database.manual_close()
        kept.connection = None

    def drop():
        if own():
            give_up()

    def give_back(_exc):
        if database.is_closed():
            return
        # Only a connection this request opened and does not keep is closed (a caller, e.g. a
        # test, may hold its own).
        if g.pop("rua_opened", False) and not own():
            database.close()            # pooled: back to the pool
        elif database.in_transaction():
            database.rollback()         # never carry an open transaction into the next request

    app.extensions["rua.connections"] = connect
    app.extensions["rua.connections.drop"] = drop
    app.teardown_request(give_back)


def streamed(pieces):
    """A streamed body's pieces, made with the store connected: Flask runs teardown before the
    first piece is sent; the worker's kept connection stays open for the stream (a caller
    without one takes one for its length and gives it back at the end)."""
    opened = db.connect(reuse_if_open=True)       # False: the kept connection, left open
    try:
        yield from pieces
    finally:
        if opened and not db.is_closed():
            db.close()
