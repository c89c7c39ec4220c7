"""What one report may repeat and count, and the times it may name: the caps both readers keep.

Each cap is checked while the report is read, before what it counts is built or stored, so a
hostile report costs about what a real one of its size costs, and no count can overflow the
store's 64-bit sums (docs/ingest-limits.md gives the arithmetic and the real reports measured).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from config import Config
from ingest.model import ReportError

# The instants a report may name: 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z, every one a
# date the store and the API can write (years past 9999 have none).
FIRST_EPOCH, LAST_EPOCH = 0, 253402300799


@dataclass(frozen=True)
class Caps:
    """Config's max_<name> settings for one reading; exceeded() words the refusal."""
    auth_results: int
    report_auth_results: int
    report_messages: int
    tls_policies: int
    failure_details: int
    result_types: int
    mx_hosts: int
    policy_strings: int
    tls_values: int
    report_sessions: int

    @classmethod
    def of(cls, config: Config | None = None) -> "Caps":
        config = config or Config()
        return cls(**{cap.name: getattr(config, f"max_{cap.name}") for cap in fields(cls)})

    def exceeded(self, name: str, what: str) -> ReportError:
        """The refusal of a report holding more than cap `name` allows, naming its setting."""
        return ReportError(f"more than {getattr(self, name):,} {what} "
                           f"(RUA_MAX_{name.upper()})")


def epoch_in_range(seconds: int, what: str) -> int:
    """seconds, when it is an instant rua can keep; ReportError naming `what` (the value as the
    report wrote it) otherwise."""
    if not FIRST_EPOCH <= seconds <= LAST_EPOCH:
        raise ReportError(f"{what} is not a time between 1970 and 9999")
    return seconds
