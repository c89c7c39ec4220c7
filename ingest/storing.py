"""Store one parsed report: routed, deduplicated, records streamed in batches, one transaction."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time
from typing import NamedTuple

from peewee import IntegrityError, Value

from ingest import authenticity, copies, routing
from ingest.model import Document, NotMonitored, ParsedReport, ReportError
from ingest.printable import bounded, report_named
from ingest.record_writer import MAX_SELECTORS, RecordWriter
from ingest.shared_rows import REPORT_FIELDS, Rows, SharedRows
from rules.authenticity import NOT_FROM_MAIL, Provenance, speaks_for_reporter, unauthenticated
from rules.rates import rate
from rules.windows import window_days
from store import compiled as sql
from store import db, events, is_postgres, report_copies
from store.clock import from_epoch, utcnow
from store.domain_names import InvalidDomain, normalize
from store.report_keys import dedupe_key
from store.models import Domain, Organization, Report


@dataclass(frozen=True)
class DomainCaps:
    """How many domains reports may add to an organization by themselves, in all and a day.
    add_domains: the user takes an archive's domains in (`rua ingest --add-domains`), so its
    policy domains join as added by hand, past both caps."""
    total: int
    per_day: int
    add_domains: bool = False

    @classmethod
    def of(cls, config, *, add_domains: bool = False) -> "DomainCaps":
        return cls(config.max_auto_domains, config.max_auto_domains_per_day, add_domains)


@dataclass
class Stored:
    """The outcome of store_report: status "stored" or "duplicate", and the Report row."""
    status: str
    report: Report




def store_report(parsed: ParsedReport, *, org=None, received_at=None,
                 caps: DomainCaps | None = None, document: Document | None = None,
                 provenance: Provenance | None = None, required: tuple[str, ...] = (),
                 shared: SharedRows | None = None) -> Stored:
    """Route, dedupe and store one report; ReportError (nothing stored) when it cannot be.
    caps: a report whose domain is new to the organization is refused past them.
    document: the report's document, kept aside when the report is a conflicting copy (so a
    report with a digest needs it).
    provenance: what its mail proves (else the document's); required: RUA_REQUIRE_DKIM_FROM's
    domains, whose reports must be signed by them.
    shared: the commit group's sums (ingest/commits.py), which the report adds to and the
    group writes; without one the report writes its own.

    One transaction (a savepoint inside the caller's, ingest/pipeline.py) holds the look-ups
    and the writes."""
    meta = parsed.meta
    try:
        domain = normalize(meta.domain)
    except InvalidDomain as exc:
        raise ReportError(f"policy domain: {bounded(str(exc))}") from None
    key = dedupe_key(meta.org_name, meta.report_id, domain, meta.date_begin, meta.date_end)
    now = received_at or utcnow()
    if provenance is None:
        provenance = document.provenance if document is not None else NOT_FROM_MAIL
    mail = _Mail(provenance, required, key)
    own = shared is None
    shared = SharedRows() if own else shared
    if shared.holds(key):
        shared.write_rows()     # a copy of a report the group holds: judged against it, stored
    try:
        with writing():
            stored = _route_and_store(parsed, org, domain, mail, caps, now, shared)
            if own:
                shared.write()
                if shared.lost:
                    raise _Lost
            return stored
    except _NoRoom as refusal:
        raise _refuse(refusal.org, domain, refusal.cap, now) from None
    except _Unauthenticated as refusal:
        raise authenticity.refuse(refusal.org_id, domain, refusal.reason, now) from None
    except _Conflicting as conflicting:
        return _copy_arrived(parsed, conflicting, mail, document, now, shared)
    except (IntegrityError, _Lost):
        # Another process stored the same report between our look-up and our insert.
        existing = _stored(_target(org, domain).id, key)
        if existing is None:
            raise
        try:
            return _resent(existing, parsed, mail)
        except _Conflicting as conflicting:
            return _copy_arrived(parsed, conflicting, mail, document, now, shared)


@dataclass(frozen=True)
class _Mail:
    """What the report's mail proves, the domains whose reports must be signed by them, and
    the report's dedupe key."""
    provenance: Provenance
    required: tuple[str, ...]
    key: str


def writing():
    """The report's transaction. On SQLite it takes the write lock at once (IMMEDIATE): its
    reads come first, and a snapshot read before another ingest's commit could not be written
    from. Inside a caller's transaction it is a savepoint."""
    if is_postgres():
        return db.atomic()
    return db.atomic(lock_type="IMMEDIATE")


class _Lost(Exception):
    """Another process stored the report (its dedupe key) between our look-up and our write."""


class _Conflicting(Exception):
    """The report is a conflicting copy of the stored report under its key (takes_place: one
    that takes the stored one's place)."""

    def __init__(self, stored: Report, takes_place: bool = False):
        super().__init__(stored.id)
        self.stored, self.takes_place = stored, takes_place


class _Unauthenticated(Exception):
    """RUA_REQUIRE_DKIM_FROM refuses the report (the reason), routed to org_id."""

    def __init__(self, org_id: str, reason: str):
        super().__init__(reason)
        self.org_id, self.reason = org_id, reason


class _NoRoom(Exception):
    """A report for a domain new to the organization would pass a cap (the setting's name)."""

    def __init__(self, org: Organization, cap: str):
        super().__init__(cap)
        self.org, self.cap = org, cap


def _target(org, domain: str) -> Organization:
    return routing.find_org(org) if org is not None else routing.route(domain)


def _route_and_store(parsed, org, domain: str, mail: _Mail, caps, now: datetime,
                     shared: SharedRows) -> Stored:
    meta = parsed.meta
    arrival = _arrival(org, domain, mail.key)
    org_id, monitored = arrival.org_id, arrival.monitored
    refusal = unauthenticated(mail.required, mail.provenance, meta.email, meta.org_name, now)
    if refusal is not None:
        raise _Unauthenticated(org_id, refusal)
    key = mail.key
    existing = _stored(org_id, key) if arrival.stored is not False else None
    if existing is not None:
        return _resent(existing, parsed, mail)
    try:
        days = window_days(meta.date_begin, meta.date_end)
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    adding = caps is not None and caps.add_domains
    if caps is not None and not adding and monitored is None:
        cap = _room(org_id, caps, now)
        if cap is not None:
            raise _NoRoom(routing.find_org(org_id), cap)
    source = "manual" if adding else "auto"
    report = _store(parsed, org_id, domain, key, days, now, monitored, source, mail.provenance,
                    shared)
    return Stored("stored", report)


class _Arrival(NamedTuple):
    """Where a report goes and what the store holds for it: its organization's id, its
    domain's (id, source, selectors) there (None: not monitored as such), and whether a
    report is stored under its key (None: not looked at yet)."""
    org_id: str
    monitored: tuple | None
    stored: bool | None


def _arrival(org, domain: str, key: str) -> _Arrival:
    """The report's _Arrival. Routed, one statement reads it all when one organization
    monitors the domain as such (a report's usual case): every statement costs Postgres its
    parse and plan besides a round trip. Else (--org, a subdomain's report, or several
    organizations) routing decides and the domain's row is read on its own."""
    if org is None:
        rows = _ARRIVING.run(name=domain, key=key)
        if len(rows) == 1:
            org_id, domain_id, source, selectors, stored_id = rows[0]
            return _Arrival(org_id, (domain_id, source, selectors), stored_id is not None)
        if not rows:        # no organization monitors the domain itself
            return _Arrival(routing.by_organizational_domain(domain).id, None, None)
    target = _target(org, domain)
    rows = _MONITORED.run(org=target.id, name=domain)
    return _Arrival(target.id, rows[0] if rows else None, None)


def _resent(existing: Report, parsed, mail: _Mail) -> Stored:
    """A copy of a stored report: a duplicate, or _Conflicting (ingest/copies.py judges)."""
    proven = mail.provenance
    judged = copies.judge(
        existing.content_digest, parsed.digest,
        speaks=speaks_for_reporter(proven.authenticity, proven.signed_by, parsed.meta.email),
        stored_speaks=speaks_for_reporter(existing.authenticity, existing.signed_by,
                                          existing.email),
        chosen=lambda: report_copies.chosen(existing.org_id, "dmarc", mail.key))
    if judged == copies.DUPLICATE:
        return Stored("duplicate", existing)
    raise _Conflicting(existing, judged == copies.TAKES_PLACE)


def _copy_arrived(parsed, conflicting: _Conflicting, mail: _Mail, document: Document | None,
                  now: datetime, shared: SharedRows) -> Stored:
    """A conflicting copy (its document, as read again) taking the stored report's place, or
    kept aside: then ReportError, the refusal saying so. The group's sums are written first:
    taking a report's place subtracts its sums, which may still be the group's."""
    shared.write()
    meta, stored = parsed.meta, conflicting.stored
    copy = copies.Copy("dmarc", mail.key, parsed.digest, meta.org_name, meta.report_id,
                       stored.domain, meta.date_begin, meta.date_end)
    with document.open() as stream:
        content = stream.read()
    report_id = copies.arrived(copy, content, stored.org_id, described(stored),
                               f"/reports/{stored.id}", mail.provenance,
                               conflicting.takes_place, now)
    return Stored("stored", Report.get_by_id(report_id))


def described(report: Report) -> str:
    """A stored report as a refusal or an event names it."""
    return (f"report {report.id} ({report_named(report.org_name, report.report_id)} "
            f"for {report.domain}, {report.day_begin} to {report.day_end})")


def over_cap(total: int, today: int, caps: DomainCaps) -> str | None:
    """Which cap one more auto domain would pass (given the org's auto domains in all and
    today), as the setting that sets it; None when there is room."""
    if total >= caps.total:
        return f"RUA_MAX_AUTO_DOMAINS={caps.total}"
    if today >= caps.per_day:
        return f"RUA_MAX_AUTO_DOMAINS_PER_DAY={caps.per_day}"
    return None


def _room(org_id: str, caps: DomainCaps, now: datetime) -> str | None:
    """The cap one more auto domain of the organization would pass, or None."""
    midnight = datetime.combine(now.date(), time())      # the store's clock: naive UTC
    auto = Domain.select().where(Domain.org == org_id, Domain.source == "auto")
    total, today = auto.count(), auto.where(Domain.created_at >= midnight).count()
    return over_cap(total, today, caps)


def _refuse(org: Organization, domain: str, cap: str, now: datetime) -> NotMonitored:
    """The refusal of a report past a cap, after telling the organization's people once a day
    through an auto_domain_cap event."""
    midnight = datetime.combine(now.date(), time())
    fix = "add it with `rua domain add` to accept its reports"
    events.raise_event(
        org.id, "auto_domain_cap", f"auto_domain_cap:{midnight.date().isoformat()}",
        title=f"Reports for new domains refused ({cap})",
        detail=(f"Reports for domains not yet monitored, first {domain}, were refused: the "
                f"organization reached {cap}. If a domain is yours, {fix}."), now=now)
    return NotMonitored(f"domain cap: {domain} is not monitored and reports may add no more "
                        f"domains to {org.name} ({cap}); if it is yours, {fix}", domain, org.name)


def _stored(org_id: str, key: str) -> Report | None:
    """The report already stored under this dedupe key, if any."""
    rows = _STORED.run(org=org_id, key=key)
    return sql.row(Report, REPORT_FIELDS, rows[0]) if rows else None


def _store(parsed, org_id: str, domain: str, key: str, days, received_at,
           monitored, source: str, provenance: Provenance, shared: SharedRows) -> Report:
    meta = parsed.meta
    warnings: list[str] = []
    report = Report(**_fit(Report, warnings, dict(
        org=org_id, dedupe_key=key, content_digest=parsed.digest, version=meta.version,
        org_name=meta.org_name,
        email=meta.email, extra_contact_info=meta.extra_contact_info, report_id=meta.report_id,
        date_begin=meta.date_begin, date_end=meta.date_end, day_begin=days[0], day_end=days[1],
        errors=meta.errors, generator=meta.generator, domain=domain, adkim=meta.adkim,
        aspf=meta.aspf, p=meta.p, sp=meta.sp, np=meta.np, pct=meta.pct, fo=meta.fo,
        testing=meta.testing, psd=meta.psd, discovery_method=meta.discovery_method,
        received_at=received_at, **authenticity.columns(provenance))))
    # Postgres: the row is written once, with its totals, by the commit group with the other
    # reports' rows and the records this report has not written yet (their reference to it is
    # checked at commit): a statement for many reports, where an update would leave a dead row
    # and new index entries. SQLite updates in place, and checks a record's report as it goes
    # in, which costs less than deferring the check.
    first = not is_postgres()
    if first:
        sql.insert_rows(Report, REPORT_FIELDS, [sql.values_of(report, REPORT_FIELDS)])
    writer = RecordWriter(report, domain, lambda model, values: _fit(model, warnings, values),
                          keep_last=not first)
    writer.write_all(parsed.records)
    report.record_count = writer.records
    report.total_messages, report.compliant_messages = writer.messages, writer.compliant
    report.compliance_rate = rate(writer.compliant, writer.messages)
    report.failure_summary = writer.summary
    report.parse_warnings = (list(parsed.warnings) + warnings) or None   # complete only now
    rows = None
    if first:
        _TOTALS.execute(id=report.id, **{f.name: f.db_value(getattr(report, f.name))
                                         for f in _TOTAL_FIELDS})
    else:
        rows = Rows(sql.values_of(report, REPORT_FIELDS), writer.kept, key)
    change = _monitor(org_id, domain, writer.selectors, monitored, source, shared)
    # Last: only a report stored whole joins the group.
    shared.add(report.id, org_id, domain, days[2], from_epoch(meta.date_begin),
               from_epoch(meta.date_end), writer.tally, report.total_messages,
               (report.p, report.pct, report.testing), meta.date_end, received_at, change, rows)
    return report


def _monitor(org_id: str, domain: str, selectors: set, row, source: str,
             shared: SharedRows) -> tuple | None:
    """The policy domain joins the org's domains as `source` (auto, or manual when the user
    takes an archive's domains in); a domain added by hand becomes both. row is its (id,
    source, selectors) when it was there already: then the change, (id, source, selectors),
    for the group to write (None: nothing changes)."""
    if row is None:
        fields = sql.columns(Domain)
        values = sql.values_of(Domain(org=org_id, name=domain, source=source,
                                      dkim_selectors=sorted(selectors)), fields)
        sql.insert_rows(Domain, fields, [values], ignore=True)
        return None
    domain_id, source, known = shared.domain(row)
    room = max(0, MAX_SELECTORS - len(known))
    merged = known + sorted(s for s in selectors if s not in known)[:room]
    if source == "manual" or merged != known:
        return domain_id, "both" if source == "manual" else source, merged
    return None


def _fit(model, warnings: list, values: dict) -> dict:
    """Cut text longer than its column (Postgres refuses it), with one warning per column."""
    for name, value in values.items():
        limit = getattr(getattr(model, name), "max_length", None)
        if value is None and limit and name not in ("org",):
            values[name] = "" if not getattr(model, name).null else None
        elif isinstance(value, str) and limit and len(value) > limit:
            values[name] = value[:limit]
            note = f"{name} was longer than {limit} characters and was shortened"
            if note not in warnings:
                warnings.append(note)
    return values


_STORED = sql.Compiled(lambda org, key: Report.select()
                       .where(Report.org == org, Report.dedupe_key == key))
_TOTAL_FIELDS = (Report.record_count, Report.total_messages, Report.compliant_messages,
                 Report.compliance_rate, Report.failure_summary, Report.parse_warnings)
# converter=False: each value is given as the database takes it (the JSON ones as text).
_TOTALS = sql.Compiled(lambda id, **totals: Report.update(
    {field: Value(totals[field.name], converter=False) for field in _TOTAL_FIELDS})
    .where(Report.id == id))
# The domain's row in each organization monitoring it, and the report stored there under key.
_ARRIVING = sql.Compiled(lambda name, key: Domain.select(
    Domain.org, Domain.id, Domain.source, Domain.dkim_selectors,
    Report.select(Report.id).where((Report.org == Domain.org) & (Report.dedupe_key == key)))
    .where(Domain.name == name))
_MONITORED = sql.Compiled(lambda org, name: Domain
                          .select(Domain.id, Domain.source, Domain.dkim_selectors)
                          .where(Domain.org == org, Domain.name == name))
