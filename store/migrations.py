"""Versioned schema migrations, applied in order by `rua init` (idempotent).

Version 1 creates the tables as store/models.py declares them; version 2 moves a SQLite
store's request counters into their own file (store/__init__.py says why); version 3 drops two
record indexes that others cover; version 4 has SQLite keep each organization's hourly total
row by triggers; version 5 allows one open event per dedupe key; version 6 gives sources their
totals (kept by ingest from then on) and enrichment fields; version 7 adds notification
channels and the outbox of their deliveries; version 8 has sources remember the other
spellings of their address; version 9 gives them the text their search matches; version 10
puts the period into reports' duplicate key, gives them a content digest and records fetched
messages being read; version 11 indexes domains by name for routing and lets ingest write a
report's row after its records on Postgres (their reference to it checked at commit); version
12 adds SMTP TLS reports, their policies and their daily totals; version 13 keeps each
scheduled job's last run; version 14 has reports say when retention deleted their records;
version 15 drops each table's (org_id) index, which its other indexes lead with; version 16
gives TLS reports a content digest and keeps conflicting copies of reports aside; version 17
keeps the pages' sign-in sessions; version 18 has reports and kept copies say what their mail
proves of their origin (DKIM); version 19 keeps the sending addresses of reports whose records
were pruned; version 20 writes monitored names with IDNA labels by IDNA 2008, saying what it
changed; version 21 has snapshots carry the version of their body's shape; version 22 gives
SQLite's reports back an (org_id) index, for the report version; version 23 keeps sources'
sort indexes on SQLite and drops those over their totals on Postgres, so ingest updates them in
place there; version 24 gives reports fewer and narrower indexes on Postgres, whose time-ordered
ones each grew to a fifth of the table and more; version 25 has a record on Postgres reach its
organization through its report alone. Once a release has shipped, never edit an applied
migration: add the next one (playhouse.migrate's add_column and friends), so an existing
database is upgraded in place without losing data.
"""
from __future__ import annotations

import logging

from peewee import fn

from store import is_postgres, meter
from store.addresses import canonical_ip, ip_key, remember_spellings, search_text
from store.clock import from_epoch
from store.domain_names import InvalidDomain, renormalized
from store.models import (MODELS, Domain, IntakeAttempt, JobRun, NotifyChannel, Organization,
                          Outbox, PageSession, PrunedAddress, Record, Report, ReportCopy,
                          SchemaVersion, Source, SourceDomain, TlsDay, TlsPolicy, TlsReport,
                          Usage)
from store.report_keys import dedupe_key

log = logging.getLogger("rua.migrations")


def _initial_schema(database):
    # The counters are version 2's.
    database.create_tables([m for m in MODELS if m is not Usage], safe=True)


def _create_counters() -> None:
    """The counters' table. On SQLite it is clustered on its key (WITHOUT ROWID): each request
    reads and writes one b-tree where a rowid table and its unique index made two. peewee
    writes that clause for any database, so it is asked for on SQLite only."""
    Usage._meta.without_rowid = not is_postgres()
    try:
        Usage.create_table(safe=True)
    finally:
        Usage._meta.without_rowid = False


def _keep_org_totals() -> None:
    """SQLite: the triggers below on the counters' table (after any rows are copied in, which
    carry their organization's rows already)."""
    if not is_postgres():
        for trigger in _ORG_TOTAL_TRIGGERS:
            meter.execute_sql(trigger)


# SQLite: whatever changes a key's counts changes its organization's row of the hour (key '')
# by as much, in the same statement. So one statement can meter a request, writing the key's
# row while checking the organization's (store/usage_sql.py), and the organization's row is
# one row to read, however many keys it has. A change that counts nothing (the usage
# endpoint's own abuse check) leaves it alone.
_ADD_TO_ORG = """INSERT INTO "usage" (org_id, key_id, hour, allowed, rejected, heavy, last_at, newest, ring)
  VALUES (NEW.org_id, '', NEW.hour, {allowed}, {rejected}, {heavy}, NEW.last_at, 0, 0)
  ON CONFLICT (org_id, key_id, hour) DO UPDATE SET allowed = allowed + excluded.allowed,
    rejected = rejected + excluded.rejected, heavy = heavy + excluded.heavy,
    last_at = excluded.last_at"""
_ORG_TOTAL_TRIGGERS = (
    f"""CREATE TRIGGER IF NOT EXISTS usage_key_counted AFTER INSERT ON "usage"
WHEN NEW.key_id <> '' AND (NEW.allowed <> 0 OR NEW.rejected <> 0 OR NEW.heavy <> 0)
BEGIN {_ADD_TO_ORG.format(allowed="NEW.allowed", rejected="NEW.rejected", heavy="NEW.heavy")};
END""",
    f"""CREATE TRIGGER IF NOT EXISTS usage_key_recounted AFTER UPDATE OF allowed, rejected, heavy
ON "usage"
WHEN NEW.key_id <> ''
  AND (NEW.allowed <> OLD.allowed OR NEW.rejected <> OLD.rejected OR NEW.heavy <> OLD.heavy)
BEGIN {_ADD_TO_ORG.format(allowed="NEW.allowed - OLD.allowed", rejected="NEW.rejected - OLD.rejected",
                          heavy="NEW.heavy - OLD.heavy")};
END""")


def _counters_in_their_own_file(database):
    """The counters' table, keyed by (org, key, hour). Stores made before version 2 had a rowid
    table with indexes: SQLite's, in the store's file, is copied to the counters' file and
    dropped there; Postgres's is reshaped in place."""
    table = Usage._meta.table_name
    if is_postgres():
        if table in database.get_tables():
            _rekey_postgres_counters(database)
        _create_counters()
        return
    legacy = table in database.get_tables()
    _create_counters()
    if not legacy:
        return
    fields = Usage._meta.sorted_fields
    names = ", ".join(f.column_name for f in fields)
    rows = database.execute_sql(f'SELECT {names} FROM "{table}"').fetchall()
    with meter.atomic():
        for start in range(0, len(rows), 500):
            Usage.insert_many(rows[start:start + 500], fields=fields).on_conflict_ignore().execute()
    database.execute_sql(f'DROP TABLE "{table}"')


def _rekey_postgres_counters(database):
    """Version 1's Postgres table: an id, a foreign key and three indexes, to the one key."""
    if "id" not in {column.name for column in database.get_columns("usage")}:
        return
    for statement in ('ALTER TABLE "usage" DROP COLUMN id',          # and its primary key
                      'ALTER TABLE "usage" DROP CONSTRAINT IF EXISTS usage_org_id_fkey',
                      'ALTER TABLE "usage" ADD PRIMARY KEY (org_id, key_id, hour)',
                      'DROP INDEX IF EXISTS usage_org_id',
                      'DROP INDEX IF EXISTS usage_org_id_hour',
                      'DROP INDEX IF EXISTS usage_org_id_key_id_hour'):
        database.execute_sql(statement)


def _record_indexes_covered_by_others(database):
    """record(report_id) and record(org_id) lead (report_id, ordinal) and (org_id, source_ip)."""
    for name in ("record_report_id", "record_org_id"):
        database.execute_sql(f'DROP INDEX IF EXISTS "{name}"')


# As version 1 made them (peewee's index of a foreign key): each table's other indexes lead
# with the same column, so these bought no look-up and cost every write an index entry.
_COVERED_KEY_INDEXES = ("member_org_id", "domain_org_id", "report_org_id", "daily_rollup_org_id",
                        "domain_day_org_id", "source_org_id", "event_org_id", "outbox_event_id",
                        "snapshot_org_id", "score_history_org_id", "tls_report_org_id",
                        "tls_day_org_id")


def _key_indexes_covered_by_others(database):
    for name in _COVERED_KEY_INDEXES:
        database.execute_sql(f'DROP INDEX IF EXISTS "{name}"')


def _org_totals_kept_by_triggers(database):
    """SQLite's counters get the triggers that keep each organization's row (the rows written
    so far already add up: store.usage wrote both); Postgres keeps writing both rows."""
    _create_counters()
    _keep_org_totals()


def _one_open_event_per_key(database):
    """Events: a unique index over the open ones' (org, dedupe_key). Duplicates an unguarded
    raise may have left are closed first, the oldest kept open."""
    database.execute_sql(
        'UPDATE "event" SET cleared_at = created_at WHERE cleared_at IS NULL AND EXISTS ('
        'SELECT 1 FROM "event" AS older WHERE older.org_id = "event".org_id'
        ' AND older.dedupe_key = "event".dedupe_key AND older.cleared_at IS NULL'
        ' AND (older.created_at, older.id) < ("event".created_at, "event".id))')
    database.execute_sql(
        'CREATE UNIQUE INDEX IF NOT EXISTS "event_open_org_dedupe_key" '
        'ON "event" (org_id, dedupe_key) WHERE cleared_at IS NULL')


def _source_facts(database):
    """Sources gain their totals and what enrichment learns; SourceDomain is new. Both are
    filled from the records already stored (their canonical address, store/addresses.py)."""
    from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate as alter
    migrator = (PostgresqlMigrator if is_postgres() else SqliteMigrator)(database)
    have = {column.name for column in database.get_columns(Source._meta.table_name)}
    missing = [field for field in Source._meta.sorted_fields if field.column_name not in have]
    alter(*[migrator.add_column(Source._meta.table_name, field.column_name, field)
            for field in missing])
    database.create_tables([Source, SourceDomain], safe=True)     # and their indexes
    _backfill_sources(database)


def _backfill_sources(database):
    """SourceDomain and Source rows from the stored records, where ingest had written none."""
    if SourceDomain.select().exists() or not Record.select().exists():
        return
    held = {"quarantine": 0, "reject": 1}
    pairs: dict[tuple, list] = {}
    rows = (Record.select(Report.org, Report.domain, Record.source_ip, Record.count,
                          Record.dkim, Record.spf, Record.classification, Record.disposition,
                          Report.date_begin, Report.date_end)
            .join(Report, on=(Record.report == Report.id)).tuples().iterator())
    for org, domain, ip, count, dkim, spf, verdict, disposition, begin, end in rows:
        facts = pairs.setdefault((org, domain, canonical_ip(ip)),
                                 [begin, end, 0, 0, 0, 0, 0, 0, 0, set()])
        facts[0], facts[1] = min(facts[0], begin), max(facts[1], end)
        facts[2] += count
        facts[3] += count if "pass" in (dkim, spf) else 0
        facts[4] += count if spf != "pass" else 0
        facts[5] += count if dkim != "pass" else 0
        facts[6] += count if verdict == "likely_forwarded" else 0
        if disposition in held:
            facts[7 + held[disposition]] += count
    sources: dict[tuple, list] = {}
    for (org, domain, ip), f in pairs.items():
        SourceDomain.insert(org=org, domain=domain, ip=ip, first_seen=from_epoch(f[0]),
                            last_seen=from_epoch(f[1]), messages=f[2], compliant=f[3],
                            spf_fail=f[4], dkim_fail=f[5], forwarded=f[6], quarantined=f[7],
                            rejected=f[8], reports=1).execute()
        total = sources.setdefault((org, ip), [f[0], f[1], 0, 0, 0, 0, 0, 0])
        total[0], total[1] = min(total[0], f[0]), max(total[1], f[1])
        for i in range(2, 7):
            total[i] += f[i]
        total[7] += 1
    for (org, ip), t in sources.items():
        Source.insert(org=org, ip=ip, ip_key=ip_key(ip), first_seen=from_epoch(t[0]),
                      last_seen=from_epoch(t[1]), messages=t[2], compliant=t[3], spf_fail=t[4],
                      dkim_fail=t[5], auth_failures=t[4] + t[5], forwarded=t[6],
                      compliance_rate=100.0 * t[3] / t[2] if t[2] else 0.0,
                      domain_count=t[7]).on_conflict_ignore().execute()


def _notification_outbox(database):
    """Channels and the outbox (new tables with their indexes; nothing to fill)."""
    database.create_tables([NotifyChannel, Outbox], safe=True)


def _tls_reports(database):
    """SMTP TLS reports, their policies and their daily totals (new tables; nothing to fill)."""
    database.create_tables([TlsReport, TlsPolicy, TlsDay], safe=True)


def _add_columns(database, model, fields):
    """Add the model's fields its table lacks (a store made before them)."""
    from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate as alter
    table = model._meta.table_name
    have = {column.name for column in database.get_columns(table)}
    migrator = (PostgresqlMigrator if is_postgres() else SqliteMigrator)(database)
    alter(*[migrator.add_column(table, f.column_name, f) for f in fields
            if f.column_name not in have])


def _source_spellings(database):
    """Sources remember the other texts reports gave their address, so the records kept as
    reported are found from the source (the enrichment job re-classifies them)."""
    _add_columns(database, Source, [Source.spellings])
    rows = (Record.select(Record.org, Record.source_ip).distinct()
            .where(Record.source_ip.contains(":")).tuples())
    for org, text in rows:
        ip = canonical_ip(text)
        if ip != text:
            remember_spellings(org, {ip: {text}})


def _source_search(database):
    """Sources get the text their search matches (with an index scanned alone) and an index
    for the reputation filter, the text made from what is stored; a source's domains key
    SourceDomain by (org, ip, domain)."""
    _add_columns(database, Source, [Source.search_text])
    # A source's domains are read from one covering index, which is also the unique key.
    for name in ("source_domain_org_id_domain_ip", "source_domain_org_id_ip"):
        database.execute_sql(f'DROP INDEX IF EXISTS "{name}"')
    database.create_tables([Source, SourceDomain], safe=True)       # the new indexes
    domains: dict[tuple, list[str]] = {}
    for org, ip, domain in (SourceDomain.select(SourceDomain.org, SourceDomain.ip,
                                                SourceDomain.domain)
                            .order_by(SourceDomain.domain).tuples().iterator()):
        domains.setdefault((org, ip), []).append(domain)
    for row in Source.select(Source.id, Source.org, Source.ip, Source.ptr, Source.service_name):
        text = search_text(row.ip, domains.get((row.org_id, row.ip), ()), row.ptr,
                           row.service_name)
        Source.update(search_text=text).where(Source.id == row.id).execute()


def _keys_with_the_period(database):
    """Reports' duplicate key gains the period, recomputed from each stored report; their
    content digest stays unknown (""), so a copy of one is still a plain duplicate. Fetched
    messages being read get their table."""
    if "content_digest" not in {c.name for c in database.get_columns("report")}:
        # Not through _add_columns: peewee adds a NOT NULL column by filling every row and
        # then (SQLite) copying the whole table; a constant default needs neither.
        database.execute_sql(ADD_CONTENT_DIGEST)
    database.create_tables([IntakeAttempt], safe=True)
    columns = (Report.id, Report.org_name, Report.report_id, Report.domain, Report.date_begin,
               Report.date_end)
    last = ""
    while True:     # in pages by id: no cursor stays open over the rows being updated
        page = list(Report.select(*columns).where(Report.id > last).order_by(Report.id)
                    .limit(1000).tuples())
        for report, org_name, report_id, domain, begin, end in page:
            key = dedupe_key(org_name, report_id, domain, begin, end)
            Report.update(dedupe_key=key).where(Report.id == report).execute()
        if len(page) < 1000:
            break
        last = page[-1][0]


def _ingest_writes_once(database):
    """Routing reads domains by name through an index; on Postgres a record's reference to
    its report is checked at commit, so ingest writes the report row once, after its records,
    with its totals (ingest/storing.py)."""
    database.create_tables([Domain], safe=True)       # the (name) index
    if is_postgres():
        database.execute_sql('ALTER TABLE "record" ALTER CONSTRAINT "record_report_id_fkey" '
                             'DEFERRABLE INITIALLY DEFERRED')


def _job_runs(database):
    """The scheduler's last run of each job, for /readyz and the metrics."""
    database.create_tables([JobRun], safe=True)


def _records_pruned_at(database):
    """Reports say when retention deleted their records (null: kept)."""
    _add_columns(database, Report, [Report.records_pruned_at])


def _copies_kept_aside(database):
    """TLS reports carry a content digest ("" for those stored before, whose copies stay plain
    duplicates); conflicting copies of either kind of report get their table."""
    if "content_digest" not in {c.name for c in database.get_columns("tls_report")}:
        database.execute_sql(ADD_TLS_CONTENT_DIGEST)      # a constant default: no table copy
    database.create_tables([ReportCopy], safe=True)


def _page_sessions(database):
    """The pages' sign-in sessions (a new table; nothing to fill)."""
    database.create_tables([PageSession], safe=True)


def _authenticity(database):
    """Reports, TLS reports and kept copies say what their mail proves (DKIM); those stored
    before are unchecked. Constant defaults: no table is copied or rewritten."""
    for table in ("report", "tls_report", "report_copy"):
        have = {column.name for column in database.get_columns(table)}
        for column, kind, default in _AUTHENTICITY_COLUMNS:
            if column not in have:
                database.execute_sql(f'ALTER TABLE "{table}" ADD COLUMN "{column}" {kind} '
                                     f"NOT NULL DEFAULT '{default}'")


def _pruned_addresses(database):
    """Reports whose records retention deleted keep their distinct sending addresses, so the
    source_ip filter still finds them (reports pruned before this kept none: nothing to add)."""
    database.create_tables([PrunedAddress], safe=True)


def _idna_2008(database):
    """Monitored names with an IDNA label written again by IDNA 2008 (UTS #46); each rename,
    and each name kept as it was (IDNA 2008 refuses it, or its new form is monitored already),
    logged. A name IDNA 2003 mapped to plain ASCII (straße.de to strasse.de) cannot be told
    from one written so, and stays."""
    rows = (Domain.select(Domain.id, Domain.org, Domain.name)
            .where(Domain.name.contains("xn--")).order_by(Domain.name))
    for row in rows:
        try:
            name = renormalized(row.name)
        except InvalidDomain as exc:
            log.warning("domain %s kept as it is: %s under IDNA 2008", row.name, exc)
            continue
        if name == row.name:
            continue
        if Domain.select().where(Domain.org == row.org_id, Domain.name == name).exists():
            log.warning("domain %s kept as it is: %s, its IDNA 2008 form, is monitored too",
                        row.name, name)
            continue
        Domain.update(name=name).where(Domain.id == row.id).execute()
        log.warning("domain %s renamed %s (IDNA 2008)", row.name, name)


def _snapshot_shapes(database):
    """Snapshots carry their body's shape version; those stored before carry "", which no
    served kind has, so each is recomputed before it is served again."""
    if "shape" not in {c.name for c in database.get_columns("snapshot")}:
        database.execute_sql(ADD_SNAPSHOT_SHAPE)          # a constant default: no table copy


def _report_version_index(database):
    """SQLite's report version was MAX(rowid) of the organization's reports: one probe of an
    index on (org_id) alone, whose entries are in rowid order, where an index with more columns
    is scanned whole. The version is the organization's own since 26; the index stays, the
    narrowest for counting an organization's reports."""
    if not is_postgres():
        database.execute_sql(f'CREATE INDEX IF NOT EXISTS "{REPORT_VERSION_INDEX}" '
                             'ON "report" ("org_id")')


# The indexes /sources sorts, filters and searches by, on each database: their name and columns.
# SQLite rewrites only the index entries whose columns an update changed and leaves no dead row
# versions, so it keeps one per sort (as version 9 made them). On Postgres an update that changes
# any indexed column writes a new entry in every index of the table and leaves the old one to
# vacuum; there the totals a report changes go unindexed, so its sources are updated in place
# (HOT) on pages kept partly free for it.
SOURCE_SORT_INDEXES = {
    "sqlite": {
        "source_org_id_messages_id": ("source", ('"org_id"', '"messages"', '"id"'), ""),
        "source_org_id_last_seen_id": ("source", ('"org_id"', '"last_seen"', '"id"'), ""),
        "source_org_id_compliance_rate_id":
            ("source", ('"org_id"', '"compliance_rate"', '"id"'), ""),
        "source_org_id_auth_failures_id": ("source", ('"org_id"', '"auth_failures"', '"id"'), ""),
        "source_org_id_domain_count_id": ("source", ('"org_id"', '"domain_count"', '"id"'), ""),
        "source_org_id_abuse_status_messages_id":
            ("source", ('"org_id"', '"abuse_status"', '"messages"', '"id"'), ""),
        "source_org_id_search_text": ("source", ('"org_id"', '"search_text"'), ""),
        "source_domain_org_id_domain_messages_id":
            ("source_domain", ('"org_id"', '"domain"', '"messages"', '"id"'), ""),
    },
    "postgres": {
        "source_org_id_abuse_status": ("source", ('"org_id"', '"abuse_status"'), ""),
        "source_domain_org_id_domain": ("source_domain", ('"org_id"', '"domain"'), ""),
    },
}
SOURCE_FILLFACTOR = 80     # room on each page for a row's next version beside it


def _source_sort_indexes(database):
    """Each database gets the sources' sort indexes SOURCE_SORT_INDEXES gives it, and loses the
    other's; on Postgres sources' pages keep room for their rows' next versions."""
    indexes_by_database(database, SOURCE_SORT_INDEXES)
    if is_postgres():
        for table in ("source", "source_domain"):
            database.execute_sql(f'ALTER TABLE "{table}" SET (fillfactor = {SOURCE_FILLFACTOR})')


# The report indexes that differ by database: their name, table, columns (SQL) and condition.
# Postgres writes a report's entry in every index of `report`, at its organization's end of
# each time-ordered one, whose pages then stay half full: there an index breaks ties by id
# only where ties are many (a domain's reports of one day, a second's arrivals and a reporter's
# report ids are few, and Postgres sorts each run of them), and the indexes serving only a
# count over an organization's reporter names or a domain's failing reports by compliance are
# left out. SQLite keeps one index per sort and filter (issue 35's pages at 1M records).
REPORT_INDEXES = {
    "sqlite": {
        "report_org_id_received_at_id": ("report", ('"org_id"', '"received_at"', '"id"'), ""),
        "report_org_id_domain_id": ("report", ('"org_id"', '"domain"', '"id"'), ""),
        "report_org_lower_report_id_id":
            ("report", ('"org_id"', 'LOWER("report_id")', '"id"'), ""),
        "report_org_domain_date_end_id":
            ("report", ('"org_id"', '"domain"', '"date_end"', '"id"'), ""),
        "report_org_id_org_name_id": ("report", ('"org_id"', '"org_name"', '"id"'), ""),
        "report_failing_org_domain_compliance_rate_id":
            ("report", ('"org_id"', '"domain"', '"compliance_rate"', '"id"'),
             '"compliant_messages" < "total_messages"'),
    },
    "postgres": {
        "report_org_id_received_at": ("report", ('"org_id"', '"received_at"'), ""),
        "report_org_lower_report_id": ("report", ('"org_id"', 'LOWER("report_id")'), ""),
        "report_org_domain_date_end": ("report", ('"org_id"', '"domain"', '"date_end"'), ""),
    },
}
# Read by no query on either database: report ids are sorted and searched by other indexes or
# none. (A sort by domain breaks its ties by id: SQLite keeps an index for it; Postgres walks
# the domain filter's index and sorts each domain's reports by id, an incremental sort.)
REPORT_INDEXES_UNREAD = ("report_org_id_report_id_id",)


def create_indexes(database, indexes: dict) -> None:
    """Create each of {name: (table, columns, condition)} the database lacks."""
    for name, (table, columns, condition) in indexes.items():
        where = f" WHERE ({condition})" if condition else ""
        database.execute_sql(f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" '
                             f'({", ".join(columns)}){where}')


def indexes_by_database(database, by_database: dict, unread: tuple = ()) -> None:
    """The database gets the indexes by_database gives it ({"sqlite"/"postgres": {name: (table,
    columns, condition)}}) and loses the other database's and those named in `unread`."""
    here, other = ("postgres", "sqlite") if is_postgres() else ("sqlite", "postgres")
    for name in (*by_database[other], *unread):
        database.execute_sql(f'DROP INDEX IF EXISTS "{name}"')
    create_indexes(database, by_database[here])


def _report_indexes(database):
    """Each database gets the report indexes REPORT_INDEXES gives it and loses the other's and
    those no query reads."""
    indexes_by_database(database, REPORT_INDEXES, REPORT_INDEXES_UNREAD)


def _record_organization_by_report(database):
    """Postgres checks each inserted row's foreign keys one row at a time, a query each: a
    record's organization is its report's, whose own key and cascade already hold it, so the
    record's second check goes. SQLite would have to rebuild the table to drop it, and checks
    it cheaply in process."""
    if is_postgres():
        database.execute_sql('ALTER TABLE "record" DROP CONSTRAINT IF EXISTS "record_org_id_fkey"')


def _report_version(database):
    """Organizations carry a report version that moves with every DMARC report stored or taken
    out, begun at the number of reports they hold; the reports' day totals lose the index that
    summed it, so a report updates its day's totals in place (HOT) on Postgres."""
    if "report_version" not in {c.name for c in database.get_columns("organization")}:
        # Not _add_columns: playhouse's SQLite migrator copies a table to make a column NOT
        # NULL, and dropping the old organization table would cascade to every row under it.
        database.execute_sql(ADD_REPORT_VERSION)          # a constant default: no table copy
    counts = (Report.select(fn.COUNT(Report.id)).where(Report.org == Organization.id))
    Organization.update(report_version=counts).execute()
    database.execute_sql('DROP INDEX IF EXISTS "domain_day_org_id_reports"')


MIGRATIONS = [
    (1, "initial schema", _initial_schema),
    (2, "request counters keyed by org, key and hour, in their own file on SQLite",
     _counters_in_their_own_file),
    (3, "record indexes covered by others dropped", _record_indexes_covered_by_others),
    (4, "organization request totals kept by triggers on SQLite", _org_totals_kept_by_triggers),
    (5, "one open event per organization and dedupe key", _one_open_event_per_key),
    (6, "source facts: totals per source and per source and domain, enrichment fields",
     _source_facts),
    (7, "notification channels and the outbox of their deliveries", _notification_outbox),
    (8, "sources remember the other spellings of their address", _source_spellings),
    (9, "sources carry the text their search matches; source domains keyed by ip first",
     _source_search),
    (10, "reports' duplicate key holds their period, reports carry a content digest, and "
         "fetched messages being read are recorded", _keys_with_the_period),
    (11, "domains indexed by name; report rows written after their records",
     _ingest_writes_once),
    (12, "SMTP TLS reports (RFC 8460), their policies and daily totals", _tls_reports),
    (13, "the last run of each scheduled job", _job_runs),
    (14, "reports say when retention deleted their records", _records_pruned_at),
    (15, "foreign key indexes covered by others dropped", _key_indexes_covered_by_others),
    (16, "TLS reports carry a content digest; conflicting copies of reports kept aside",
     _copies_kept_aside),
    (17, "the pages' sign-in sessions", _page_sessions),
    (18, "reports and kept copies say what their mail proves of their origin (DKIM)",
     _authenticity),
    (19, "reports whose records were pruned keep their sending addresses", _pruned_addresses),
    (20, "monitored domain names with IDNA labels written by IDNA 2008", _idna_2008),
    (21, "snapshots carry the version of their body's shape", _snapshot_shapes),
    (22, "reports indexed by organization alone for the report version on SQLite",
     _report_version_index),
    (23, "sources' sort indexes by database: on Postgres their totals updated in place",
     _source_sort_indexes),
    (24, "report indexes by database: on Postgres fewer and narrower", _report_indexes),
    (25, "on Postgres a record reaches its organization through its report alone",
     _record_organization_by_report),
    (26, "organizations carry their report version; day totals lose the index that summed it",
     _report_version),
]


# How Postgres words the versions whose description is about SQLite's files and triggers.
ON_POSTGRES = {
    2: "request counters keyed by org, key and hour",
    4: "organization request totals (written by the application on Postgres)",
    22: "nothing on Postgres (its report version sums DomainDay)",
}


def described(version: int, description: str) -> str:
    """The description of `version` as the store being migrated applies it."""
    if is_postgres():
        return ON_POSTGRES.get(version, description)
    return description


ADD_CONTENT_DIGEST = ("""ALTER TABLE "report" ADD COLUMN "content_digest" VARCHAR(64) """
                      """NOT NULL DEFAULT ''""")
ADD_TLS_CONTENT_DIGEST = ADD_CONTENT_DIGEST.replace('"report"', '"tls_report"')
_AUTHENTICITY_COLUMNS = (("authenticity", "VARCHAR(12)", "unchecked"),
                         ("signed_by", "VARCHAR(253)", ""),
                         ("authenticity_reason", "VARCHAR(255)",
                          "stored before rua checked signatures"))
REPORT_VERSION_INDEX = "report_org_rowid"
ADD_REPORT_VERSION = ('ALTER TABLE "organization" ADD COLUMN "report_version" BIGINT '
                      'NOT NULL DEFAULT 0')
ADD_SNAPSHOT_SHAPE = """ALTER TABLE "snapshot" ADD COLUMN "shape" VARCHAR(16) NOT NULL DEFAULT ''"""


def applied_versions(database) -> set[int]:
    """The versions the store's schema_version rows name (none before `rua init`)."""
    if not database.table_exists(SchemaVersion._meta.table_name):
        return set()
    return {version for (version,) in SchemaVersion.select(SchemaVersion.version).tuples()}


def current_version(database) -> int:
    if not database.table_exists(SchemaVersion._meta.table_name):
        return 0
    row = SchemaVersion.select().order_by(SchemaVersion.version.desc()).first()
    return row.version if row else 0


class UnknownSchema(Exception):
    """The store holds a schema version this rua has no migration for: a newer rua (or another
    branch) made it, and this one would read, write or migrate it wrongly."""


def refuse_unknown(versions, whose: str = "the store's") -> None:
    """Raise UnknownSchema naming the first of `versions` (a store's schema_version rows) that
    this rua does not know; whose names the store in the message."""
    newest = max(versions, default=0)
    if newest > latest_version():
        raise UnknownSchema(f"{whose} schema version {newest} is newer than this rua knows "
                            f"({latest_version()})")
    unknown = sorted(set(versions) - {version for version, _, _ in MIGRATIONS})
    if unknown:
        raise UnknownSchema(f"{whose} schema version {unknown[0]} is not one this rua knows")


def migrate(database, versions=None) -> list[tuple[int, str]]:
    """Apply every pending migration (of `versions` only, if given: a store as it stood at
    those), each in its own transaction; return those applied. A store holding a version this
    rua does not know raises UnknownSchema before anything is changed."""
    done = applied_versions(database)
    refuse_unknown(done)
    if not is_postgres() and not database.get_tables():
        # A new SQLite store gives the pages `rua prune` frees back to the file system
        # (store/retention.py). WAL is on already, so the change needs a VACUUM, instant while
        # the file is empty; as a per-connection pragma it would take a lock every time.
        database.execute_sql("PRAGMA auto_vacuum = incremental")
        database.execute_sql("VACUUM")
    database.create_tables([SchemaVersion], safe=True)
    applied = []
    # By number, not by rank: a migration merged after higher ones (10 after 13) still runs
    # on a store that has those.
    for version, description, step in MIGRATIONS:
        if version in done or (versions is not None and version not in versions):
            continue
        with database.atomic():
            step(database)
            SchemaVersion.create(version=version, description=described(version, description))
        applied.append((version, described(version, description)))
    # The counters' file can be lost or replaced on its own (it holds counts only).
    _create_counters()
    if current_version(database) >= 4:
        _keep_org_totals()
    return applied


def latest_version() -> int:
    # The highest number, wherever it stands in the list (migrations merge by number).
    return max(version for version, _, _ in MIGRATIONS)
