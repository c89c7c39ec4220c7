"""`rua ingest --dry-run`: the real ingest inside one transaction that is rolled back.

Every report is parsed, routed, deduplicated, capped and written exactly as a real run would,
so each verdict is the real one (a report the archive holds twice is a duplicate the second
time, the caps count the domains the run itself adds), and then nothing of it stays: reports,
domains, events and their notifications are all rows of the rolled-back transaction. On SQLite
the run holds the store's write lock until it ends, as one long ingest would.
"""
from __future__ import annotations

from typing import Iterator

from ingest.pipeline import FileResult, ingest_paths
from ingest.storing import writing
from store.models import Domain


class DryRun:
    """Iterate it for the FileResults; then `added` lists the (org id, domain) pairs the run
    would add to organizations' monitored domains."""

    def __init__(self, paths, *, config, org=None, add_domains: bool = False, progress=None,
                 attest=None):
        self.paths, self.config, self.org = paths, config, org
        self.add_domains, self.progress, self.attest = add_domains, progress, attest
        self.added: list[tuple[str, str]] = []

    def __iter__(self) -> Iterator[FileResult]:
        with writing() as transaction:
            known = _domain_ids()
            yield from ingest_paths(self.paths, config=self.config, org=self.org,
                                    add_domains=self.add_domains, progress=self.progress,
                                    attest=self.attest)
            self.added = [(org_id, name) for domain_id, org_id, name in _domains()
                          if domain_id not in known]
            transaction.rollback()


def _domains():
    return Domain.select(Domain.id, Domain.org, Domain.name).order_by(Domain.name).tuples()


def _domain_ids() -> set[int]:
    return {domain_id for domain_id, _, _ in _domains()}
