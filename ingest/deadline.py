"""A message's wall-clock budget, checked between documents and while records stream."""
from __future__ import annotations

import time
from typing import Iterator, TypeVar

from ingest.model import ReportError

T = TypeVar("T")
# Records between two looks at the clock: cheap, and often enough for a budget in seconds.
EVERY = 256


class MessageDeadline:
    """seconds from now on the monotonic clock; the clock is a parameter for the tests."""

    def __init__(self, seconds: float, clock=time.monotonic):
        self.seconds, self.clock = seconds, clock
        self.at = clock() + seconds

    def passed(self) -> bool:
        return self.clock() >= self.at

    def reason(self) -> str:
        return f"its {self.seconds:g}-second budget is spent (RUA_MAX_MESSAGE_SECONDS)"

    def watch(self, items: Iterator[T]) -> Iterator[T]:
        """items, until the deadline passes: then ReportError, so the report is not stored."""
        try:
            for number, item in enumerate(items):
                if number % EVERY == 0 and self.passed():
                    raise ReportError(self.reason())
                yield item
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()
