"""Poison messages: one whose reading did not finish twice (the process died or was killed)
is refused unread on the third, so it cannot stop intake on every run."""
from __future__ import annotations

import hashlib
from typing import Callable

from peewee import DatabaseError

from ingest.pipeline import FileResult
from store import intake_attempts
from store.clock import utcnow

# Readings that may end without finishing before the message is refused unread.
POISON_AFTER = 2


def message_key(mailbox: str, message: str) -> str:
    """The message's name in the store: its mailbox and its name there, hashed to a fixed size."""
    return hashlib.sha256(f"{mailbox}\x00{message}".encode("utf-8", "surrogateescape")).hexdigest()


def refused_unread(origin: str, unfinished: int) -> FileResult:
    """The result of a message whose readings did not finish `unfinished` times."""
    reason = (f"{origin}: its reading did not finish {unfinished} times (the process died or "
              f"was killed while reading it); refused unread")
    return FileResult(origin, refusals=[reason]).settle()


def read_once(key: str, origin: str,
              read: Callable[[], FileResult | None]) -> FileResult | None:
    """read()'s result, the reading recorded as started until it returns; or, when earlier
    readings did not finish POISON_AFTER times, the message refused unread."""
    unfinished = intake_attempts.unfinished(key)
    if unfinished >= POISON_AFTER:
        intake_attempts.finish(key)
        return refused_unread(origin, unfinished)
    try:
        intake_attempts.begin(key, utcnow())
    except DatabaseError:
        # The store cannot be written (locked, unreachable): the reading fails the same way
        # and keeps the message to be read again, which is what it should do.
        return read()
    result = read()
    intake_attempts.finish(key)
    return result
