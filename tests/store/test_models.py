"""The schema on SQLite and Postgres (RUA_TEST_DATABASE_URL): migrations, uniqueness, cascades."""
from __future__ import annotations

import datetime

import pytest
from peewee import ForeignKeyField, IntegrityError

from store import keys, meter, migrations, open_db, queries, report_copies
from store.migrations import REPORT_VERSION_INDEX, current_version, latest_version, migrate
from store.models import (MODELS, ApiKey, DailyRollup, Domain, DomainDay, Event, Member,
                          NotifyChannel, Organization, Record, Report, ReportCopy,
                          SchemaVersion, ScoreHistory, Snapshot, Source, SourceDomain,
                          PrunedAddress, TlsReport, Usage)
from tests.factories import make_domain, make_key, make_member, make_org, make_tls_report
from tests.store.scratch import empty_database_url

DAY = datetime.date(2026, 3, 1)
MOMENT = datetime.datetime(2026, 3, 1, 12, 30, 5)


@pytest.fixture
def empty_database(tmp_path):
    """A connected database with no tables at all."""
    with empty_database_url(tmp_path) as url:
        database = open_db(url)
        with database.connection_context():
            yield database
        if hasattr(database, "close_all"):
            database.close_all()


def minimal_report(org, **fields) -> Report:
    values = dict(org=org, dedupe_key="k1", org_name="google.com", report_id="r1",
                  date_begin=1772323200, date_end=1772409600, day_begin=DAY, day_end=DAY,
                  domain="example.com")
    return Report.create(**{**values, **fields})


def minimal_record(report, **fields) -> Record:
    values = dict(report=report, org=report.org, ordinal=0, source_ip="192.0.2.1", count=3,
                  dkim="pass", spf="fail", classification="authenticated")
    return Record.create(**{**values, **fields})


# Each row builder makes one row of a table for an org; twice in a row must collide.
UNIQUE_ROWS = {
    "organization name": lambda org: Organization.create(name="Acme"),
    "member e-mail within an org": lambda org: make_member(org, email="a@example.com"),
    "domain within an org": lambda org: make_domain(org, name="example.com"),
    "report dedupe key within an org": lambda org: minimal_report(org),
    "daily rollup per domain, day and source": lambda org: DailyRollup.create(
        org=org, domain="example.com", day=DAY, source_ip="192.0.2.1"),
    "domain day": lambda org: DomainDay.create(org=org, domain="example.com", day=DAY),
    "source ip within an org": lambda org: Source.create(
        org=org, ip="192.0.2.1", first_seen=MOMENT, last_seen=MOMENT),
    "source per domain and ip": lambda org: SourceDomain.create(
        org=org, domain="example.com", ip="192.0.2.1", first_seen=MOMENT, last_seen=MOMENT),
    "snapshot kind and variant": lambda org: Snapshot.create(
        org=org, kind="overview", variant="", body=b"{}", etag="e", computed_at=MOMENT),
    "score history day": lambda org: ScoreHistory.create(
        org=org, day=DAY, score=90.0, grade="A", compliance_rate=99.0, spf_rate=98.0,
        dkim_rate=97.0, total_messages=10),
    "usage hour per key": lambda org: Usage.create(org=org, key_id="", hour=1772366400),
}


def test_a_new_database_starts_at_version_zero(empty_database):
    assert current_version(empty_database) == 0


def test_migrate_creates_every_table_and_records_the_version(empty_database):
    assert migrate(empty_database) == [(v, migrations.described(v, text))
                                       for v, text, _ in migrations.MIGRATIONS]
    tables = set(empty_database.get_tables()) | set(meter.get_tables())
    assert {m._meta.table_name for m in MODELS + [SchemaVersion]} <= tables
    assert current_version(empty_database) == latest_version()


def test_migrate_is_idempotent_and_reaches_the_latest_version(database):
    assert migrate(database) == []
    assert current_version(database) == latest_version()
    assert SchemaVersion.select().count() == len(migrations.MIGRATIONS)


def test_a_pending_migration_is_applied_in_order_and_recorded(empty_database, monkeypatch):
    migrate(empty_database)
    step = lambda database: database.execute_sql("CREATE TABLE probe (id INTEGER)")  # noqa: E731
    nxt = latest_version() + 1
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS + [(nxt, "probe", step)])
    assert migrate(empty_database) == [(nxt, "probe")]
    assert current_version(empty_database) == nxt
    assert "probe" in empty_database.get_tables()


def migrate_up_to(database, version: int, monkeypatch) -> None:
    """Bring the database to an older version, as a store made by an earlier release is."""
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:version])
        migrate(database)


def test_a_sqlite_store_made_before_version_2_moves_its_counters_to_their_own_file(empty_database, monkeypatch):
    if "sqlite" not in type(empty_database).__name__.lower():
        pytest.skip("the counters share the database on Postgres")
    migrate_up_to(empty_database, 1, monkeypatch)
    meter.execute_sql('DROP TABLE "usage"')
    empty_database.execute_sql('CREATE TABLE "usage" (id INTEGER PRIMARY KEY, org_id TEXT, key_id TEXT,'
                               ' hour INTEGER, allowed INTEGER, rejected INTEGER, heavy INTEGER,'
                               ' last_at INTEGER, newest INTEGER, ring INTEGER)')
    empty_database.execute_sql("INSERT INTO usage VALUES (7, 'org', 'key', 3600, 5, 1, 0, 3700, 3700, 5)")
    assert migrate(empty_database)[0][0] == 2
    assert "usage" not in empty_database.get_tables()
    assert [(u.org, u.key_id, u.hour, u.allowed, u.rejected, u.ring) for u in Usage.select()] == [
        ("org", "key", 3600, 5, 1, 5)]


def test_a_postgres_store_made_before_version_2_has_its_counters_rekeyed_in_place(empty_database, monkeypatch):
    if "sqlite" in type(empty_database).__name__.lower():
        pytest.skip("SQLite's counters move to their own file")
    migrate_up_to(empty_database, 1, monkeypatch)
    empty_database.execute_sql('DROP TABLE "usage"')
    for statement in (   # as version 1 made it
            'CREATE TABLE "usage" (id BIGSERIAL PRIMARY KEY, org_id VARCHAR(26) NOT NULL'
            ' REFERENCES organization (id) ON DELETE CASCADE, key_id VARCHAR(26) NOT NULL,'
            ' hour BIGINT NOT NULL, allowed INTEGER NOT NULL, rejected INTEGER NOT NULL,'
            ' heavy INTEGER NOT NULL, last_at BIGINT NOT NULL, newest BIGINT NOT NULL,'
            ' ring BIGINT NOT NULL)',
            'CREATE INDEX usage_org_id ON "usage" (org_id)',
            'CREATE UNIQUE INDEX usage_org_id_key_id_hour ON "usage" (org_id, key_id, hour)',
            'CREATE INDEX usage_org_id_hour ON "usage" (org_id, hour)'):
        empty_database.execute_sql(statement)
    org = make_org()
    empty_database.execute_sql("INSERT INTO usage (org_id, key_id, hour, allowed, rejected, heavy,"
                               " last_at, newest, ring) VALUES (%s, 'key', 3600, 5, 1, 0, 3700, 3700, 5)",
                               (org.id,))
    assert migrate(empty_database)[0][0] == 2
    assert meter.get_primary_keys("usage") == ["org_id", "key_id", "hour"]
    assert [i.name for i in meter.get_indexes("usage") if not i.name.endswith("_pkey")] == []
    assert [(u.org, u.key_id, u.hour, u.allowed, u.rejected, u.ring) for u in Usage.select()] == [
        (org.id, "key", 3600, 5, 1, 5)]


def test_a_store_made_before_version_3_loses_the_record_indexes_others_cover(empty_database, monkeypatch):
    migrate_up_to(empty_database, 2, monkeypatch)
    for column in ("report_id", "org_id"):     # as version 1 made them
        empty_database.execute_sql(f'CREATE INDEX "record_{column}" ON "record" ("{column}")')
    assert migrate(empty_database)[0] == (3, "record indexes covered by others dropped")
    names = {index.name for index in empty_database.get_indexes("record")}
    assert not names & {"record_report_id", "record_org_id"}
    assert {"record_report_id_ordinal", "record_org_id_source_ip"} <= names


def test_a_store_made_before_version_15_loses_the_foreign_key_indexes_others_cover(empty_database, monkeypatch):
    migrate_up_to(empty_database, 14, monkeypatch)
    for table, column in (("report", "org_id"), ("source", "org_id"), ("outbox", "event_id")):
        empty_database.execute_sql(      # as version 1 made them
            f'CREATE INDEX "{table}_{column}" ON "{table}" ("{column}")')
    assert migrate(empty_database)[0] == (15, "foreign key indexes covered by others dropped")
    for table, column in (("report", "org_id"), ("source", "org_id"), ("outbox", "event_id")):
        names = {index.name for index in empty_database.get_indexes(table)}
        assert f"{table}_{column}" not in names and names


def test_a_store_made_before_version_16_gets_tls_digests_and_the_kept_copies(empty_database,
                                                                           monkeypatch):
    migrate_up_to(empty_database, 15, monkeypatch)
    stored = make_tls_report(make_org())
    empty_database.execute_sql('ALTER TABLE "tls_report" DROP COLUMN "content_digest"')
    empty_database.execute_sql('DROP TABLE "report_copy"')      # as version 15 left them
    assert migrate(empty_database)[0] == (      # then any later ones
        16, "TLS reports carry a content digest; conflicting copies of reports kept aside")
    assert TlsReport.get_by_id(stored.id).content_digest == ""   # a copy of it is a duplicate
    assert ReportCopy.select().count() == 0


def test_a_store_made_before_version_19_gets_the_table_of_pruned_addresses(empty_database,
                                                                           monkeypatch):
    migrate_up_to(empty_database, 16, monkeypatch)
    empty_database.execute_sql('DROP TABLE "pruned_address"')     # as version 16 left it
    assert (19, "reports whose records were pruned keep their sending addresses") in \
        migrate(empty_database)
    assert PrunedAddress.select().count() == 0


def test_version_20_writes_monitored_idna_names_by_idna_2008_and_says_what_it_did(
        empty_database, monkeypatch, caplog):
    with monkeypatch.context() as patch:                 # a store as every version before 20
        patch.setattr(migrations, "MIGRATIONS", [m for m in migrations.MIGRATIONS if m[0] < 20])
        migrate(empty_database)
    org = make_org()
    for name in ("example.com", "strasse.de", "xn--strae-oqa.de", "xn--ab-5f1i.de",
                 "xn--n3h.com"):
        Domain.create(org=org, name=name)
    assert migrate(empty_database)[0] == (
        20, "monitored domain names with IDNA labels written by IDNA 2008")
    assert sorted(d.name for d in Domain.select()) == [
        "example.com", "strasse.de", "xn--ab-y8l.de", "xn--n3h.com", "xn--strae-oqa.de"]
    assert caplog.messages == [
        "domain xn--ab-5f1i.de renamed xn--ab-y8l.de (IDNA 2008)",
        "domain xn--n3h.com kept as it is: '☃.com' is not a valid internationalized domain "
        "name under IDNA 2008"]


def test_a_store_made_before_version_21_has_its_snapshots_recomputed(empty_database, monkeypatch):
    migrate_up_to(empty_database, 17, monkeypatch)
    org = make_org()
    empty_database.execute_sql('ALTER TABLE "snapshot" DROP COLUMN "shape"')   # as 17 left it
    mark = empty_database.param
    empty_database.execute_sql(
        'INSERT INTO "snapshot" ("org_id", "kind", "variant", "body", "etag", "computed_at") '
        f"VALUES ({mark}, 'overview', '', {mark}, 'e', {mark})", (org.id, b"{}", MOMENT))
    assert (21, "snapshots carry the version of their body's shape") in migrate(empty_database)
    # No served kind's version is "": the blob is computed again before it is served.
    assert Snapshot.get(Snapshot.org == org.id).shape == ""


def test_from_version_23_sources_are_sorted_by_indexes_of_their_database(empty_database,
                                                                          monkeypatch):
    """SQLite keeps an index per sort; Postgres leaves the totals a report changes unindexed, so
    a source's next report updates it in place."""
    migrate_up_to(empty_database, 22, monkeypatch)
    for table, columns in (("source", ("messages", "id")), ("source", ("search_text",)),
                           ("source_domain", ("domain", "messages", "id"))):
        quoted = ", ".join(f'"{column}"' for column in ("org_id", *columns))
        empty_database.execute_sql(       # as version 9 made them
            f'CREATE INDEX "{table}_org_id_{"_".join(columns)}" ON "{table}" ({quoted})')
    assert migrate(empty_database)[0] == (23, migrations.described(
        23, "sources' sort indexes by database: on Postgres their totals updated in place"))
    kept = {("org_id", "ip"), ("org_id", "ip_key", "id"), ("org_id", "first_seen", "id"),
            ("org_id", "enriched_at")}
    if "postgres" in type(empty_database).__name__.lower():
        assert indexed(empty_database, "source") == kept | {("org_id", "abuse_status")}
        assert indexed(empty_database, "source_domain") == {("org_id", "ip", "domain"),
                                                            ("org_id", "domain")}
    else:
        assert indexed(empty_database, "source") == kept | {
            ("org_id", "messages", "id"), ("org_id", "last_seen", "id"),
            ("org_id", "compliance_rate", "id"), ("org_id", "auth_failures", "id"),
            ("org_id", "domain_count", "id"), ("org_id", "abuse_status", "messages", "id"),
            ("org_id", "search_text")}
        assert indexed(empty_database, "source_domain") == {
            ("org_id", "ip", "domain"), ("org_id", "domain", "messages", "id")}


def test_from_version_25_a_record_on_postgres_reaches_its_organization_by_its_report(
        empty_database, monkeypatch):
    """The record's own reference to its organization goes on Postgres (its report's holds
    it); SQLite keeps it. Deleting an organization removes its records either way (above)."""
    migrate_up_to(empty_database, 23, monkeypatch)
    assert "org_id" in record_references(empty_database)
    assert (25, migrations.described(
        25, "on Postgres a record reaches its organization through its report alone")
            ) in migrate(empty_database)
    if "postgres" in type(empty_database).__name__.lower():
        assert record_references(empty_database) == {"report_id"}
    else:
        assert record_references(empty_database) == {"report_id", "org_id"}


def record_references(database) -> set[str]:
    """The columns of the record table that the database checks as foreign keys."""
    return {key.column for key in database.get_foreign_keys("record")}


def indexed(database, table: str) -> set[tuple]:
    """The columns of each of the table's indexes but its primary key's."""
    return {tuple(index.columns) for index in database.get_indexes(table)} - {("id",)}


@pytest.mark.parametrize("table", ["source", "source_domain"])
def test_on_postgres_sources_pages_keep_room_for_their_rows_next_versions(database, table):
    if "postgres" not in type(database).__name__.lower():
        pytest.skip("a storage parameter of Postgres")
    options = database.execute_sql(
        "SELECT reloptions FROM pg_class WHERE relname = %s", (table,)).fetchone()[0]
    assert options == [f"fillfactor={migrations.SOURCE_FILLFACTOR}"]


def test_no_index_of_a_new_store_is_led_by_another_ones_columns(database):
    """A look-up an index serves, a longer index that begins with its columns serves too; but
    not MAX(rowid), which the report version's index is for."""
    for model in MODELS:
        indexes = [index for index in database.get_indexes(model._meta.table_name)
                   if not index.unique and all(index.columns)
                   and index.name != REPORT_VERSION_INDEX]
        for index in indexes:
            for other in database.get_indexes(model._meta.table_name):
                longer = len(other.columns) > len(index.columns)
                assert not (longer and other.columns[:len(index.columns)] == index.columns), (
                    index.name, other.name)


def test_from_version_26_an_organization_carries_its_report_version(empty_database, monkeypatch):
    migrate_up_to(empty_database, 25, monkeypatch)
    busy, quiet = make_org(), make_org()
    for report_id in ("r1", "r2", "r3"):
        minimal_report(busy, dedupe_key=report_id, report_id=report_id)
    # As version 25 left a store: no version column, and the index that summed it.
    empty_database.execute_sql('ALTER TABLE "organization" DROP COLUMN "report_version"')
    empty_database.execute_sql('CREATE INDEX "domain_day_org_id_reports" '
                               'ON "domain_day" ("org_id", "reports")')
    assert migrate(empty_database)[0] == (26, migrations.described(
        26, "organizations carry their report version; day totals lose the index that summed it"))
    assert queries.report_version(busy.id) == 3 and queries.report_version(quiet.id) == 0
    assert "domain_day_org_id_reports" not in {
        index.name for index in empty_database.get_indexes("domain_day")}


def test_from_version_4_sqlite_adds_a_key_rows_change_to_its_organizations_row(empty_database, monkeypatch):
    sqlite = "sqlite" in type(empty_database).__name__.lower()
    migrate_up_to(empty_database, 3, monkeypatch)
    org = make_org()
    Usage.create(org=org.id, key_id="", hour=3600, allowed=5, rejected=1)   # as version 3 wrote
    Usage.create(org=org.id, key_id="key", hour=3600, allowed=5, rejected=1)
    assert migrate(empty_database)[0] == (4, migrations.described(
        4, "organization request totals kept by triggers on SQLite"))
    Usage.update(allowed=Usage.allowed + 2, heavy=Usage.heavy + 1).where(Usage.key_id == "key").execute()
    Usage.create(org=org.id, key_id="other", hour=3600, rejected=3)
    Usage.update(ring=7).where(Usage.key_id == "other").execute()          # counts nothing
    total = Usage.get((Usage.key_id == "") & (Usage.hour == 3600))
    # Postgres: store.usage writes the organization's row itself.
    assert (total.allowed, total.rejected, total.heavy) == ((7, 4, 1) if sqlite else (5, 1, 0))


def test_a_failing_migration_leaves_no_trace(empty_database, monkeypatch):
    migrate(empty_database)

    def broken(database):
        database.execute_sql("CREATE TABLE half_done (id INTEGER)")
        raise RuntimeError("migration bug")

    last = latest_version()
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS + [(last + 1, "broken", broken)])
    with pytest.raises(RuntimeError):
        migrate(empty_database)
    assert current_version(empty_database) == last
    assert "half_done" not in empty_database.get_tables()


@pytest.mark.parametrize("build", UNIQUE_ROWS.values(), ids=UNIQUE_ROWS.keys())
def test_a_duplicate_row_is_refused(database, build):
    org = make_org()
    build(org)
    with pytest.raises(IntegrityError), database.atomic():
        build(org)


PER_ORG = {name: build for name, build in UNIQUE_ROWS.items()
           if name not in ("organization name", "key hits per second")}


@pytest.mark.parametrize("build", PER_ORG.values(), ids=PER_ORG.keys())
def test_the_same_row_is_allowed_in_another_organization(database, build):
    build(make_org())
    build(make_org())


def test_a_key_digest_is_unique(database):
    org = make_org()
    row, plaintext = make_key(org)
    with pytest.raises(IntegrityError), database.atomic():
        ApiKey.create(org=org, member=row.member, digest=keys.digest(plaintext), prefix="x")


def test_record_ordinals_are_unique_within_a_report(database):
    report = minimal_report(make_org())
    minimal_record(report)
    with pytest.raises(IntegrityError), database.atomic():
        minimal_record(report)


def test_a_row_pointing_at_a_missing_organization_is_refused(database):
    with pytest.raises(IntegrityError), database.atomic():
        Member.create(org="0" * 26, email="a@example.com", role="owner")


def test_deleting_an_organization_removes_everything_it_owns(database):
    doomed, kept = make_org(), make_org()
    for org in (doomed, kept):
        make_key(org)
        minimal_record(minimal_report(org))
        for name, build in PER_ORG.items():
            if name != "report dedupe key within an org":
                build(org)
        Event.create(org=org, type="new_source", severity="info", title="t", dedupe_key="d")
        NotifyChannel.create(org=org, kind="email", target="ops@example.com")
        make_tls_report(org)
        PrunedAddress.create(report=minimal_report(org, dedupe_key="k2"), org=org,
                             source_ip="192.0.2.1")
        report_copies.keep(org.id, "dmarc", "key", "digest", b"<feedback/>", org_name="r",
                           report_id="1", domain="example.com", date_begin=0, date_end=1,
                           received_at=datetime.datetime(2026, 1, 1))
    doomed.delete_instance()
    # The request counters are kept apart (on SQLite in their own file), outside the cascade.
    owned = [m for m in MODELS if isinstance(m._meta.fields.get("org"), ForeignKeyField)]
    for model in owned:
        assert model.select().where(model.org == doomed.id).count() == 0, model.__name__
        assert model.select().where(model.org == kept.id).count() > 0, model.__name__


def test_deleting_a_member_removes_their_keys_only(database):
    org = make_org()
    gone, stays = make_key(org)[0], make_key(org)[0]
    gone.member.delete_instance()
    assert [k.id for k in ApiKey.select()] == [stays.id]


def test_deleting_a_report_removes_its_records(database):
    org = make_org()
    first, second = minimal_report(org, dedupe_key="a"), minimal_report(org, dedupe_key="b")
    minimal_record(first)
    minimal_record(second)
    first.delete_instance()
    assert [r.report_id for r in Record.select()] == [second.id]


def test_a_key_is_stored_only_as_its_digest(database):
    row, plaintext = make_key(make_org())
    stored = ApiKey.get_by_id(row.id)
    assert plaintext not in (stored.digest, stored.prefix, stored.name)
    assert stored.digest == keys.digest(plaintext) and plaintext.startswith(stored.prefix)


def test_organization_ids_are_ulids(database):
    org = make_org()
    assert len(Organization.get_by_id(org.id).id) == 26


def test_values_read_back_as_written(database):
    org = make_org()
    domain = make_domain(org, dkim_selectors=["s1", "google"], dns={"dmarc": {"p": "reject"}},
                         verified_at=MOMENT)
    snap = Snapshot.create(org=org, kind="overview", body=b"\x00{\"a\":1}", etag="e",
                           computed_at=MOMENT)
    again = Domain.get_by_id(domain.id)
    assert (again.dkim_selectors, again.dns) == (["s1", "google"], {"dmarc": {"p": "reject"}})
    assert again.verified_at == MOMENT and again.verified_at.tzinfo is None
    assert bytes(Snapshot.get_by_id(snap.id).body) == b"\x00{\"a\":1}"
    assert Report.get_by_id(minimal_report(org).id).day_begin == DAY


def test_the_counters_are_one_b_tree_keyed_by_org_key_and_hour(database, config):
    """Every request reads and writes its two counter rows through that key alone."""
    assert [i.name for i in meter.get_indexes("usage") if not i.name.endswith("_pkey")] == []
    assert meter.get_primary_keys("usage") == ["org_id", "key_id", "hour"]
    if config.is_sqlite:
        sql = meter.execute_sql("SELECT sql FROM sqlite_master WHERE name = 'usage'").fetchone()[0]
        assert sql.rstrip().endswith("WITHOUT ROWID")


def test_version_12_adds_the_tls_report_tables_to_an_older_store(empty_database, monkeypatch):
    migrate_up_to(empty_database, 9, monkeypatch)
    for table in ("tls_day", "tls_policy", "tls_report"):    # made by a release before them
        empty_database.execute_sql(f'DROP TABLE "{table}"')
    assert 12 in [version for version, _ in migrate(empty_database)]
    assert {"tls_report", "tls_policy", "tls_day"} <= set(empty_database.get_tables())
