"""Where a message goes, from its FileResult and its failed readings alone."""
import sqlite3

import peewee
import psycopg2.errors
import pytest

from ingest.model import ReportError
from ingest.pipeline import FileResult, refuse
from intake.outcome import DONE, FAILED, KEEP, REFUSED, outcome, too_large
from intake.poison import POISON_AFTER, filed_as

STORED = {"status": "stored"}
SEEN = {"status": "duplicate"}


def wrapped(error: Exception, as_class=peewee.OperationalError) -> Exception:
    """The driver's error as peewee raises it."""
    return as_class(error, *error.args)


LOCKED = wrapped(sqlite3.OperationalError("database is locked"))
BUG = OverflowError("Python int too large to convert to SQLite INTEGER")


def refused(*errors: Exception) -> FileResult:
    """A message with one report stored and one refused document for each error."""
    result = FileResult("m", reports=[STORED])
    for number, error in enumerate(errors):
        refuse(result, f"m » {number}.xml", error)
    return result.settle()


def test_stored_or_already_stored_is_done():
    assert outcome(FileResult("m", reports=[STORED]).settle()) == DONE
    assert outcome(FileResult("m", reports=[SEEN]).settle()) == DONE


def test_anything_refused_is_refused_even_beside_stored_reports():
    assert outcome(refused(ReportError("bad"))) == REFUSED
    assert outcome(FileResult("m").settle()) == REFUSED          # no report in it at all


def test_the_reason_names_the_store_or_the_unexpected_error():
    assert refused(LOCKED, BUG).refusals == [
        "m » 0.xml: the store failed (OperationalError: database is locked)",
        ("m » 1.xml: unexpected error (OverflowError: Python int too large to convert to "
         "SQLite INTEGER)")]


@pytest.mark.parametrize("errors, failed, goes", [
    # The report's own fault: refused at once.
    ((ReportError("bad"),), 1, REFUSED),
    # An error rua cannot classify, whatever it is: read again until POISON_AFTER failures.
    ((BUG,), 1, KEEP),
    ((BUG,), POISON_AFTER, REFUSED),
    ((ReportError("bad"), BUG), 1, KEEP),
    ((peewee.DataError("bigint out of range"),), POISON_AFTER, REFUSED),
    ((peewee.IntegrityError("NOT NULL constraint failed"),), POISON_AFTER, REFUSED),
    ((KeyError("policies"),), POISON_AFTER, REFUSED),
    ((wrapped(sqlite3.OperationalError("too many SQL variables")),), POISON_AFTER, REFUSED),
    # The store's failure: kept however many readings failed, even beside an unexpected error.
    ((LOCKED,), POISON_AFTER + 5, KEEP),
    ((BUG, LOCKED), POISON_AFTER + 5, KEEP),
    ((sqlite3.OperationalError("database is locked"),), POISON_AFTER + 5, KEEP),
    ((wrapped(psycopg2.InterfaceError("connection already closed"), peewee.InterfaceError),),
     POISON_AFTER + 5, KEEP),
    ((psycopg2.errors.AdminShutdown("terminating connection"),), POISON_AFTER + 5, KEEP),
], ids=repr)
def test_where_a_message_goes_after_a_reading(errors, failed, goes):
    assert filed_as(outcome(refused(*errors)), failed) == goes


def test_only_an_unexpected_error_counts_as_a_failed_reading():
    assert outcome(refused(BUG)) == FAILED
    assert outcome(refused(LOCKED)) == KEEP
    assert filed_as(DONE, POISON_AFTER) == DONE


def test_too_large_is_refused_with_its_size():
    result = too_large("INBOX;UID=7", 300, 200)
    assert outcome(result) == REFUSED
    assert result.error == "INBOX;UID=7: 300 bytes, larger than the 200-byte limit"
