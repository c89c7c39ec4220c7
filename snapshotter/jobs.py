"""Refresh jobs: read facts, compute every body through the pure functions, store the blobs."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from peewee import EXCLUDED

from rules.scores import WindowScores, compliance_doc
from rules.snapshot_facts import TREND_DAYS
from shapes import bodies, versions
from snapshotter import event_refresh, day_totals, facts as facts_module
from snapshotter.health import assess, health_doc
from snapshotter.history import backfill_days, history_point, history_row
from snapshotter.overview import overview_doc
from snapshotter.trends import last_day, merge_days, trend_series
from store import db, events, locks, snapshots
from store.clock import stored_date
from store.encoding import dumps
from store.models import ScoreHistory

# The shape of each served kind's stored body (trends and history store their points). A blob
# stored under another shape version is recomputed before it is served
# (webapp/snapshot_answers.py).
SHAPES = {"overview": bodies.OverviewBody, "compliance": bodies.ComplianceScoreBody,
          "trends": list[bodies.TrendPointBody], "history": list[bodies.HistoryPointBody],
          "health": bodies.DomainHealthBody}
SHAPE_VERSIONS = {kind: versions.version(shape) for kind, shape in SHAPES.items()}
SERVED_KINDS = tuple(SHAPES)
VARIANT_KINDS = ("compliance", "trends", "health")      # one blob per domain
CHUNK_DOMAINS = 500      # domains whose bodies are computed and stored per transaction
# How long a request that computes one body waits for its organization's lock, held by a
# refresh (about 0.1 s an organization) or by another request's body, before it answers
# without storing: a request is never made to wait long.
ONE_WAIT_SECONDS = 1.0


def org_lock(org_id: str, lock_dir: str, wait: float = 0):
    """The organization's snapshot lock (store/locks.exclusive): every writer of its blobs
    holds it, so a body computed from older facts never replaces a newer one."""
    return locks.exclusive(f"snapshots.{org_id}", lock_dir, wait)


@dataclass(frozen=True)
class Refreshed:
    org_id: str
    blobs: int
    bytes: int
    days_summed: int


def refresh_org(org_id: str, now: datetime, *, kinds=SERVED_KINDS,
                report_address: str = "") -> Refreshed:
    """Recompute the organization's blobs of `kinds`: the per-domain ones a chunk of domains
    per transaction, then the organization-wide ones, then the blobs of domains gone."""
    # Taken first: a report stored while we compute marks the organization dirty again.
    # Only a refresh of every kind settles a dirty organization (the hourly health job does not).
    settles = set(SERVED_KINDS) <= set(kinds)
    was_dirty = events.take_dirty(org_id) if settles else None
    changed = False
    try:
        with db.atomic():     # one consistent read on SQLite; Postgres reads committed rows
            facts, cache, summed = facts_module.read(org_id, now.date(), report_address)
        # Conditions judged from these facts (snapshotter/event_refresh.py); a refresh of every kind
        # shows their events itself, a partial one leaves the organization for the next.
        changed = event_refresh.apply(org_id, facts, now, mark=not settles)
        if changed:
            facts_module.reload_items(org_id, facts)
        window_scores = WindowScores(facts)
        history = _history(org_id, window_scores) if "history" in kinds else None
        written, assessed = Written(), []
        names = sorted(facts.domains)
        # The bodies, not the facts, are what grows (a year of trends per domain): each chunk's
        # are stored and dropped before the next chunk's are computed.
        for start in range(0, len(names), CHUNK_DOMAINS):
            chunk = names[start:start + CHUNK_DOMAINS]
            judged = [assess(window_scores, n) for n in chunk] if {"overview", "health"} & set(kinds) \
                else []
            if "overview" in kinds:
                assessed.extend(judged)
            docs = domain_docs(window_scores, now, kinds, chunk, judged)
            written.add(snapshots.put_many(org_id, docs, now, whole_kinds=False,
                                           shapes=SHAPE_VERSIONS))
        docs = org_docs(window_scores, now, kinds, assessed, history)
        if cache is not None:
            docs[(day_totals.CACHE_KIND, "")] = cache
        written.add(snapshots.put_many(org_id, docs, now, whole_kinds=False,
                                       shapes=SHAPE_VERSIONS))
        snapshots.prune(org_id, {k: written.variants.get(k, set())
                                 for k in kinds if k in VARIANT_KINDS})
    except BaseException:
        if was_dirty is not None or (changed and settles):
            events.mark_dirty(org_id, min(was_dirty or now, now))
        raise
    if was_dirty is not None:
        events.settle_dirty(org_id)
    return Refreshed(org_id, written.blobs, written.bytes, summed)


@dataclass
class Written:
    """What a refresh stored so far: counts, served bytes, and the variants per kind."""
    blobs: int = 0
    bytes: int = 0
    variants: dict = field(default_factory=dict)

    def add(self, blobs: dict):
        self.blobs += len(blobs)
        for (kind, variant), blob in blobs.items():
            self.variants.setdefault(kind, set()).add(variant)
            self.bytes += len(blob.body) if kind != day_totals.CACHE_KIND else 0


def refresh_one(org_id: str, kind: str, variant: str, now: datetime, config,
                stale: snapshots.Blob | None = None) -> snapshots.Blob:
    """Compute and store one served body, nothing else: a domain's from that domain's facts
    alone, an organization-wide one from the stored per-domain facts (day totals, policies).
    The organization stays dirty and its conditions unjudged: that is refresh_org's work.

    It is stored under the organization's lock. When another writer still holds it after
    ONE_WAIT_SECONDS, `stale` (the stored body) is the answer: the contract lets figures be a
    few minutes old, and that writer is refreshing them. Without one, the body computed here
    is the answer, stored by nobody (the writer stores its own)."""
    with org_lock(org_id, config.lock_dir, ONE_WAIT_SECONDS) as held:
        if not held and stale is not None:
            return stale
        with db.atomic():
            if variant:
                facts, cache = facts_module.read_domain(org_id, variant, now.date(),
                                                        config.report_address), None
            else:
                facts, cache, _ = facts_module.read(org_id, now.date(), config.report_address)
        window_scores = WindowScores(facts)
        history = _history(org_id, window_scores, save=held) if kind == "history" else None
        docs = {(kind, variant): body(window_scores, kind, variant, now, history_rows=history)}
        if not held:
            served = bytes(snapshots.encode(docs[(kind, variant)]))
            return snapshots.Blob(served, snapshots.etag_of(served), now, SHAPE_VERSIONS[kind])
        if cache is not None:
            docs[(day_totals.CACHE_KIND, "")] = cache
        blobs = snapshots.put_many(org_id, docs, now, whole_kinds=False, shapes=SHAPE_VERSIONS)
    return blobs[(kind, variant)]


def body(window_scores: WindowScores, kind: str, variant: str, now: datetime, *, assessment=None,
         assessed=None, history_rows=None):
    """The body of one (kind, variant), the one place a kind is mapped to what computes it.
    assessment: the domain's health assessment, assessed: every domain's (overview), when
    already made; history_rows: the rows a history body shows."""
    if kind == "overview":
        return overview_doc(window_scores, assessed)
    if kind == "compliance":
        return compliance_doc(window_scores, variant or None)
    if kind == "trends":
        return _trends(window_scores.facts, variant)
    if kind == "health":
        return health_doc(window_scores, variant, now, assessment)
    if kind == "history":
        return dumps([history_point(r) for r in history_rows])
    raise ValueError(f"no served kind {kind!r}")


def _trends(facts, name: str = "") -> bytes:
    """The 365-day series of one domain, or merged over the organization's (name "")."""
    if name:
        days = facts.domains[name].days
        return trend_series(days, last_day(facts.today, days))
    merged = merge_days([d.days for d in facts.domains.values()])
    return trend_series(merged, last_day(facts.today, merged), TREND_DAYS)


def domain_docs(window_scores: WindowScores, now: datetime, kinds, names, assessed) -> dict:
    """The per-domain bodies of `kinds` for `names`, keyed (kind, name); `assessed` holds
    their assessments when health is among the kinds."""
    docs = {}
    for kind in ("compliance", "trends"):
        if kind in kinds:
            docs.update(((kind, n), body(window_scores, kind, n, now)) for n in names)
    if "health" in kinds:
        for a in assessed:
            if window_scores.facts.domains[a.name].monitored:
                docs[("health", a.name)] = body(window_scores, "health", a.name, now, assessment=a)
    return docs


def org_docs(window_scores: WindowScores, now: datetime, kinds, assessed, history_rows=None) -> dict:
    """The organization-wide bodies of `kinds`, keyed (kind, ""); series kinds as bytes."""
    docs = {}
    for kind in ("overview", "compliance", "trends"):
        if kind in kinds:
            docs[(kind, "")] = body(window_scores, kind, "", now, assessed=assessed)
    if history_rows is not None:
        docs[("history", "")] = body(window_scores, "history", "", now, history_rows=history_rows)
    return docs


def _history(org_id: str, window_scores: WindowScores, *, save: bool = True) -> list[dict]:
    """Fill the days with reports that have no history row yet, keep today's row current,
    and return the last year's rows oldest first; save=False: the same rows, none written."""
    today = window_scores.facts.today
    first = today - timedelta(days=TREND_DAYS - 1)
    have = {stored_date(d) for (d,) in ScoreHistory.select(ScoreHistory.day)
            .where(ScoreHistory.org == org_id, ScoreHistory.day >= first).tuples()}
    rows = [history_row(window_scores, day) for day in backfill_days(window_scores, first) if day not in have]
    # The last day's row kept current: today once today has messages, else yesterday's (its
    # late reports still arrive), so the history never ends on a day not yet reported.
    end = last_day(today, *(d.days for d in window_scores.facts.domains.values()))
    current = [r for r in [history_row(window_scores, end)] if r is not None]
    if save:
        save_history(org_id, [r for r in rows if r is not None], replace=False)
        save_history(org_id, current, replace=True)
    query = (ScoreHistory.select().where(ScoreHistory.org == org_id, ScoreHistory.day >= first)
             .order_by(ScoreHistory.day))
    found = {stored_date(h.day): {"day": stored_date(h.day), "score": h.score, "grade": h.grade,
                                  "compliance_rate": h.compliance_rate, "spf_rate": h.spf_rate,
                                  "dkim_rate": h.dkim_rate, "total_messages": h.total_messages}
             for h in query}
    if not save:
        found.update((r["day"], r) for r in rows + current if r is not None)
    return [found[day] for day in sorted(found)]


def save_history(org_id: str, rows: list[dict], *, replace: bool):
    """Insert history rows; replace=True overwrites a day's row, False keeps the one there."""
    if not rows:
        return
    values = [dict(row, org=org_id) for row in rows]
    with db.atomic():
        for start in range(0, len(values), 200):
            query = ScoreHistory.insert_many(values[start:start + 200])
            if replace:
                query = query.on_conflict(
                    conflict_target=[ScoreHistory.org, ScoreHistory.day],
                    update={f: getattr(EXCLUDED, f.name) for f in HISTORY_FIELDS})
            else:
                query = query.on_conflict_ignore()
            query.execute()


HISTORY_FIELDS = (ScoreHistory.score, ScoreHistory.grade, ScoreHistory.compliance_rate,
                  ScoreHistory.spf_rate, ScoreHistory.dkim_rate, ScoreHistory.total_messages)


def record_day(org_id: str, day: date, now: datetime, report_address: str = "") -> bool:
    """Write the final history row of a finished day (the daily job); False without data."""
    with db.atomic():
        facts, _, _ = facts_module.read(org_id, now.date(), report_address)
    row = history_row(WindowScores(facts), day)
    if row is not None:
        save_history(org_id, [row], replace=True)
    return row is not None
