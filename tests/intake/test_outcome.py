"""Where a message goes, from its FileResult alone."""
from ingest.pipeline import FileResult
from intake.outcome import DONE, KEEP, REFUSED, outcome, too_large

STORED = {"status": "stored"}
SEEN = {"status": "duplicate"}


def test_stored_or_already_stored_is_done():
    assert outcome(FileResult("m", reports=[STORED]).settle()) == DONE
    assert outcome(FileResult("m", reports=[SEEN]).settle()) == DONE


def test_anything_refused_is_refused_even_beside_stored_reports():
    assert outcome(FileResult("m", reports=[STORED], refusals=["m » a.xml: bad"]).settle()) \
        == REFUSED
    assert outcome(FileResult("m").settle()) == REFUSED          # no report in it at all


def test_a_failure_that_is_not_the_messages_keeps_it_in_place():
    failed = FileResult("m", reports=[STORED], refusals=[
        "m » a.xml: bad", "m » b.xml: unexpected error (OperationalError: database is locked)"])
    assert outcome(failed.settle()) == KEEP


def test_too_large_is_refused_with_its_size():
    result = too_large("INBOX;UID=7", 300, 200)
    assert outcome(result) == REFUSED
    assert result.error == "INBOX;UID=7: 300 bytes, larger than the 200-byte limit"
