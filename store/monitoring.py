"""What the store knows about how rua is doing, read at scrape time for GET /metrics.

Every figure comes from tables any process writes (ingest, the scheduler, the CLI, other hosts),
so one scrape of any web worker sees them all. Only summaries are read: report summaries, daily
rollups and per-source totals, never per-record rows, which retention may have deleted.
"""
from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from peewee import Case, fn

from store import compiled as sql
from store.clock import stored_instant
from store.encoding import loads
from store.events import REFRESHING
from store.models import (DailyRollup, Domain, NotifyChannel, Organization, Outbox, Report,
                          Snapshot, Source, SourceDomain)


class Messages(NamedTuple):
    """Messages reported for one organization's policy domain by one reporter."""
    organization: str
    reporter: str
    domain: str
    total: int
    compliant: int


class DomainSums(NamedTuple):
    """Messages of one organization's policy domain that passed a check or met a disposition."""
    organization: str
    domain: str
    first: int
    second: int


class Pending(NamedTuple):
    organization: str
    since: datetime


class Scores(NamedTuple):
    """An organization's stored /compliance-score body: its overall score (None without messages
    in the scoring window) and its monitored domains' entries that counted messages."""
    organization: str
    score: float | None
    domains: list[dict]


class Deliveries(NamedTuple):
    """Outbox rows of one channel kind by state."""
    kind: str
    pending: int
    delivered: int
    given_up: int


def reports_stored() -> int:
    """DMARC aggregate reports stored (retention keeps their summaries: this only grows)."""
    return Report.select().count()


def messages_by_reporter() -> list[Messages]:
    query = (Report.select(Organization.name, Report.org_name, Report.domain,
                           fn.SUM(Report.total_messages), fn.SUM(Report.compliant_messages))
             .join(Organization)
             .group_by(Organization.name, Report.org_name, Report.domain)
             .tuples())
    return [Messages(*row) for row in query]


def aligned_passes() -> list[DomainSums]:
    """(SPF aligned pass, DKIM aligned pass) per domain, from the daily rollups."""
    query = (DailyRollup.select(Organization.name, DailyRollup.domain,
                                fn.SUM(DailyRollup.spf_aligned_pass),
                                fn.SUM(DailyRollup.dkim_aligned_pass))
             .join(Organization)
             .group_by(Organization.name, DailyRollup.domain)
             .tuples())
    return [DomainSums(*row) for row in query]


def held_messages() -> list[DomainSums]:
    """(quarantined, rejected) per domain, from the per-source totals."""
    query = (SourceDomain.select(Organization.name, SourceDomain.domain,
                                 fn.SUM(SourceDomain.quarantined), fn.SUM(SourceDomain.rejected))
             .join(Organization, on=(SourceDomain.org == Organization.id))
             .group_by(Organization.name, SourceDomain.domain)
             .tuples())
    return [DomainSums(*row) for row in query]


def newest_reports() -> list[Pending]:
    """When each organization last received a report."""
    query = (Report.select(Organization.name, fn.MAX(Report.received_at))
             .join(Organization).group_by(Organization.name).tuples())
    return [Pending(name, stored_instant(at)) for name, at in query]


def snapshots_behind() -> list[Pending]:
    """Organizations whose snapshots wait for the scheduler, and since when (not those it is
    refreshing now)."""
    query = (Organization.select(Organization.name, Organization.dirty_since)
             .where(Organization.dirty_since.is_null(False),
                    Organization.dirty_since != REFRESHING).tuples())
    return [Pending(name, stored_instant(at)) for name, at in query]


def organizations() -> list[str]:
    return [name for (name,) in Organization.select(Organization.name).tuples()]


def compliance_scores() -> list[Scores]:
    """Each organization's scores as its last snapshot refresh stored them (the API's figures).
    Only monitored domains are kept, so the series stay bounded by the organizations' domains."""
    monitored = set(_MONITORED.run())
    query = (Snapshot.select(Snapshot.org, Organization.name, Snapshot.body)
             .join(Organization)
             .where(Snapshot.kind == "compliance", Snapshot.variant == "").tuples())
    scores = []
    for org_id, name, body in query:
        doc = loads(bytes(body))
        counted = [entry for entry in doc["domain_scores"]
                   if (org_id, entry["domain"]) in monitored and entry["total_messages"]]
        overall = doc["overall_score"] if doc["total_messages"] else None
        scores.append(Scores(name, overall, counted))
    return scores


# (organization id, domain name) of every monitored domain, without peewee's per-row conversion,
# which would cost more than the query on a store of many domains.
_MONITORED = sql.Compiled(lambda: Domain.select(Domain.org, Domain.name))


def deliveries() -> list[Deliveries]:
    pending = Outbox.delivered_at.is_null() & Outbox.failed_at.is_null()
    query = (Outbox.select(NotifyChannel.kind, _count(pending),
                           _count(Outbox.delivered_at.is_null(False)),
                           _count(Outbox.failed_at.is_null(False)))
             .join(NotifyChannel).group_by(NotifyChannel.kind).tuples())
    return [Deliveries(*row) for row in query]


def domains_by_state() -> dict[str, int]:
    """Domains by DMARC verification state (store.models.VERIFICATION_STATES)."""
    query = (Domain.select(Domain.dmarc_state, fn.COUNT(Domain.id))
             .group_by(Domain.dmarc_state).tuples())
    return dict(query)


def dns_statuses() -> dict[tuple[str, str], int]:
    """Domains by record kind and the status of its last live check (ok, warning, ...)."""
    counts: dict[tuple[str, str], int] = {}
    for (checked,) in Domain.select(Domain.dns).where(Domain.dns.is_null(False)).tuples():
        for kind, entry in (checked or {}).items():
            if isinstance(entry, dict) and entry.get("status"):
                key = (kind, entry["status"])
                counts[key] = counts.get(key, 0) + 1
    return counts


def sources_by_enrichment() -> dict[str, int]:
    """Sending IPs by whether enrichment has looked them up yet."""
    enriched = Source.select().where(Source.enriched_at.is_null(False)).count()
    waiting = Source.select().where(Source.enriched_at.is_null()).count()
    return {"enriched": enriched, "pending": waiting}


def _count(condition):
    """How many rows of the group meet the condition."""
    return fn.SUM(Case(None, [(condition, 1)], 0))
