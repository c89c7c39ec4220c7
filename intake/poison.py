"""Poison messages: no message is read forever. A reading fails when the process dies while
reading (killed, out of memory) or when an error rua cannot classify refuses part of it; after
POISON_AFTER failed readings the message is filed as refused. A failure of the store itself
(unreachable, locked, restarting) is not the message's: it does not count, and the message is
kept and read again however often, so a store's outage does not cost a genuine report."""
from __future__ import annotations

import hashlib
from typing import Callable, NamedTuple

from ingest.pipeline import STORE_FAILED, FileResult, refuse
from intake.outcome import FAILED, KEEP, REFUSED, outcome
from store import intake_attempts
from store.clock import utcnow
from store.failures import is_store_failure

# Failed readings after which a message is filed as refused.
POISON_AFTER = 2


class Reading(NamedTuple):
    """A message's result and where it goes: intake/outcome.py's DONE, REFUSED or KEEP."""
    result: FileResult
    goes: str


def message_key(mailbox: str, message: str) -> str:
    """The message's name in the store: its mailbox and its name there, hashed to a fixed size."""
    return hashlib.sha256(f"{mailbox}\x00{message}".encode("utf-8", "surrogateescape")).hexdigest()


def filed_as(kind: str, failed: int) -> str:
    """Where a message goes after a reading of outcome `kind` (intake/outcome.py), `failed`
    of its readings having failed, this one counted: a FAILED one is kept until it has failed
    POISON_AFTER times, then refused with the reason it failed for; the rest go as they are."""
    if kind != FAILED:
        return kind
    return REFUSED if failed >= POISON_AFTER else KEEP


def refused_unread(origin: str, failed: int) -> FileResult:
    """The result of a message whose readings failed `failed` times, the last one unfinished."""
    reason = (f"{origin}: its reading failed {failed} times, the last time without finishing "
              f"(the process died or was killed while reading it); refused unread")
    return FileResult(origin, refusals=[reason]).settle()


def read_once(key: str, origin: str,
              read: Callable[[], FileResult | None]) -> Reading | None:
    """read()'s result and where the message goes, its failed readings counted in the store
    (key names the message there); None when read() found the message gone. A store's failure
    that read() raises is raised, the message kept and this reading not counted."""
    failed = intake_attempts.failed(key)
    if failed >= POISON_AFTER:
        # Only a reading that never ended leaves this many: a failed one that reached the
        # limit was filed.
        _record(intake_attempts.finish, key)
        return Reading(refused_unread(origin, failed), REFUSED)
    counted = _record(intake_attempts.begin, key, utcnow())
    try:
        result = _read(origin, read)
    except Exception:
        _take_back(key, counted)
        raise
    if result is None:
        _record(intake_attempts.finish, key)
        return None
    goes = filed_as(outcome(result), failed + 1)
    if goes != KEEP:
        _record(intake_attempts.finish, key)
        return Reading(result, goes)
    if result.fault == STORE_FAILED:
        _take_back(key, counted)
        result.error += "; the message is kept and read again next time"
    else:                                   # this failed reading stays counted
        result.error += (f"; the message is kept and read again, and refused once "
                         f"{POISON_AFTER} readings have failed")
    return Reading(result, goes)


def _read(origin: str, read: Callable[[], FileResult | None]) -> FileResult | None:
    """read()'s result; an error escaping it that is not the store's failure is refused as
    unexpected, as the pipeline refuses one inside it."""
    try:
        return read()
    except Exception as exc:
        if is_store_failure(exc):
            raise
        result = FileResult(origin)
        refuse(result, origin, exc)
        return result.settle()


def _take_back(key: str, counted: bool) -> None:
    """The store failed during this reading: it does not count (if it was counted at all)."""
    if counted:
        _record(intake_attempts.take_back, key)


def _record(change: Callable, *args) -> bool:
    """Make one change to the count; False when the store failed (locked, unreachable): the
    reading goes on regardless, its count then off by one at most."""
    try:
        change(*args)
    except Exception as exc:
        if not is_store_failure(exc):
            raise
        return False
    return True
