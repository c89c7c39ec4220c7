"""Every table of rua, for the whole v1 contract. Public ids are ULIDs; times are naive UTC.

A foreign key gets no index of its own (index=False) where the table's other indexes lead
with it: such an index would buy no look-up and cost every write an entry."""
from __future__ import annotations

from peewee import (BigAutoField, BigIntegerField, BlobField, BooleanField, CharField,
                    CompositeKey, DateField, DateTimeField, FloatField, ForeignKeyField,
                    IntegerField, Model, SQL, TextField, fn)

from store import db, meter
from store.clock import utcnow
from store.encoding import dumps, loads
from store.ids import new_ulid

DOMAIN_SOURCES = ("manual", "auto", "both")
VERIFICATION_STATES = ("pending", "verified", "verified_inherited", "not_published",
                       "published_not_ours", "multiple_records", "unconfirmed")
CLASSIFICATIONS = ("authenticated", "likely_forwarded", "suspicious", "needs_review")


class JSONField(TextField):
    """A JSON value kept as text, so SQLite and Postgres store it alike."""

    def db_value(self, value):
        return None if value is None else dumps(value).decode()

    def python_value(self, value):
        return None if value is None else loads(value)


class UlidField(CharField):
    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 26)
        super().__init__(**kwargs)


class BaseModel(Model):
    class Meta:
        database = db
        legacy_table_names = False


class Organization(BaseModel):
    id = UlidField(primary_key=True, default=new_ulid)
    name = CharField(max_length=200, unique=True)
    plan = CharField(max_length=16, default="free")
    created_at = DateTimeField(default=utcnow)
    # Set by ingest, cleared by the snapshotter: the organization's blobs need recomputing.
    dirty_since = DateTimeField(null=True, index=True)
    # Moves with every DMARC report stored or taken out (store/events.reports_changed): the key
    # of the answers each process remembers (webapp/answer_cache.py).
    report_version = BigIntegerField(default=0)


class Member(BaseModel):
    id = UlidField(primary_key=True, default=new_ulid)
    org = ForeignKeyField(Organization, backref="members", on_delete="CASCADE", index=False)
    email = CharField(max_length=320)
    role = CharField(max_length=16)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("org", "email"), True),)


class ApiKey(BaseModel):
    id = UlidField(primary_key=True, default=new_ulid)
    org = ForeignKeyField(Organization, backref="keys", on_delete="CASCADE")
    member = ForeignKeyField(Member, backref="keys", on_delete="CASCADE")
    name = CharField(max_length=200, default="")
    digest = CharField(max_length=64, unique=True)
    prefix = CharField(max_length=16)
    scope = CharField(max_length=8, default="read")
    expires_at = DateTimeField(null=True)
    revoked_at = DateTimeField(null=True)
    created_at = DateTimeField(default=utcnow)
    last_used_at = DateTimeField(null=True)


class Domain(BaseModel):
    id = UlidField(primary_key=True, default=new_ulid)
    org = ForeignKeyField(Organization, backref="domains", on_delete="CASCADE", index=False)
    name = CharField(max_length=253)
    source = CharField(max_length=8, default="manual")
    dmarc_state = CharField(max_length=24, default="pending")
    tlsrpt_enabled = BooleanField(default=False)
    tlsrpt_state = CharField(max_length=24, default="pending")
    forensic_enabled = BooleanField(default=False)
    forensic_state = CharField(max_length=24, default="pending")
    verified_source = CharField(max_length=16, default="")
    inherited_from = CharField(max_length=253, default="")
    verified_at = DateTimeField(null=True)
    dkim_selectors = JSONField(default=list)
    dns = JSONField(null=True)               # last live DNS check, per record kind
    dns_checked_at = DateTimeField(null=True)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        # (name): routing finds the organizations monitoring a report's domain by name alone.
        indexes = ((("org", "name"), True), (("name",), False))


class Report(BaseModel):
    id = UlidField(primary_key=True, default=new_ulid)
    org = ForeignKeyField(Organization, backref="reports", on_delete="CASCADE", index=False)
    # Reporter, report id, domain and period (ingest/storing.dedupe_key), and the SHA-256 of
    # the report's XML, which tells a resent copy from a conflicting one ("": stored before).
    dedupe_key = CharField(max_length=64)
    content_digest = CharField(max_length=64, default="")
    version = CharField(max_length=16, default="1.0")
    # ReportMetadata, in the reporter's words; the window stays as the reporter's epoch integers.
    org_name = CharField(max_length=255)
    email = CharField(max_length=320, default="")
    extra_contact_info = TextField(default="")
    report_id = CharField(max_length=255)
    date_begin = BigIntegerField()
    date_end = BigIntegerField()
    day_begin = DateField()     # UTC day of begin
    day_end = DateField()       # UTC day of end, an end at 00:00:00 belonging to the day before
    errors = JSONField(null=True)
    generator = CharField(max_length=255, default="")
    # PolicyPublished.
    domain = CharField(max_length=253)
    adkim = CharField(max_length=1, default="")
    aspf = CharField(max_length=1, default="")
    p = CharField(max_length=16, default="")
    sp = CharField(max_length=16, default="")
    np = CharField(max_length=16, default="")
    pct = IntegerField(null=True)
    fo = CharField(max_length=16, default="")
    testing = CharField(max_length=1, default="")
    psd = CharField(max_length=1, default="")
    discovery_method = CharField(max_length=16, default="")
    # Totals, so list pages never touch records.
    total_messages = BigIntegerField(default=0)
    compliant_messages = BigIntegerField(default=0)
    compliance_rate = FloatField(default=0.0)
    record_count = IntegerField(default=0)
    failure_summary = JSONField(default=dict)
    parse_warnings = JSONField(null=True)
    received_at = DateTimeField(default=utcnow)
    # When retention deleted the report's records (store/retention.py); null while kept.
    records_pruned_at = DateTimeField(null=True)
    # What the report's mail proves of its origin (rules/authenticity.py): verified,
    # other_signer, failed, unsigned or unchecked (and why), and the signing domain.
    authenticity = CharField(max_length=12, default="unchecked")
    signed_by = CharField(max_length=253, default="")
    authenticity_reason = CharField(max_length=255, default="")

    class Meta:
        # The indexes both databases keep; those that differ by database (a tie-breaking id
        # on Postgres only where ties are many) are made by store/migrations.py
        # (REPORT_INDEXES).
        indexes = (
            (("org", "dedupe_key"), True),
            (("org", "date_end", "id"), False),
            (("org", "total_messages", "id"), False),
            (("org", "compliance_rate", "id"), False),
            (("org", "day_begin"), False),
            (("org", "day_end"), False),
        )


# Case-insensitive sorts of GET /reports order by lower(...): expression indexes serve them.
Report.add_index(Report.org, fn.LOWER(Report.org_name), Report.id, name="report_org_lower_org_name_id")


class Record(BaseModel):
    """One <record> of a report, in the reporter's order (ordinal)."""
    id = BigAutoField()
    # No index of their own: (report, ordinal) and (org, source_ip) lead with them, and every
    # index costs each of a large report's inserts.
    report = ForeignKeyField(Report, backref="records", on_delete="CASCADE", index=False)
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    ordinal = IntegerField()
    source_ip = CharField(max_length=64)
    count = BigIntegerField()
    disposition = CharField(max_length=16, default="none")
    dkim = CharField(max_length=8)             # aligned DKIM verdict from policy_evaluated
    spf = CharField(max_length=8)              # aligned SPF verdict from policy_evaluated
    reasons = JSONField(null=True)             # [{"Type", "Comment"}]
    envelope_to = CharField(max_length=253, default="")
    envelope_from = CharField(max_length=253, default="")
    header_from = CharField(max_length=253, default="")
    auth_dkim = JSONField(null=True)           # [{"Domain", "Selector", "Result", "HumanResult"}]
    auth_spf = JSONField(null=True)            # [{"Domain", "Scope", "Result", "HumanResult"}]
    alignment = JSONField(default=dict)        # {"spf": [bool]|None, "dkim": [bool]|None}
    classification = CharField(max_length=24)

    class Meta:
        indexes = (
            (("report", "ordinal"), True),
            (("org", "source_ip"), False),
        )


class DailyRollup(BaseModel):
    """Per org, policy domain, UTC day (midpoint of the report window) and source IP."""
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    domain = CharField(max_length=253)
    day = DateField()
    source_ip = CharField(max_length=64)
    messages = BigIntegerField(default=0)
    compliant = BigIntegerField(default=0)
    spf_aligned_pass = BigIntegerField(default=0)
    dkim_aligned_pass = BigIntegerField(default=0)
    forwarded = BigIntegerField(default=0)     # failing messages classified likely_forwarded
    reports = IntegerField(default=0)          # reports that contributed to this row

    class Meta:
        indexes = (
            (("org", "domain", "day", "source_ip"), True),
            (("org", "day"), False),
            (("org", "source_ip"), False),
        )


class DomainDay(BaseModel):
    """Per org, policy domain and UTC day: reports counted and the policy last seen."""
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    domain = CharField(max_length=253)
    day = DateField()
    reports = IntegerField(default=0)
    messages = BigIntegerField(default=0)
    policy_p = CharField(max_length=16, default="")
    policy_pct = IntegerField(null=True)
    policy_testing = CharField(max_length=1, default="")
    policy_as_of = BigIntegerField(default=0)  # date_end of the report the policy came from

    class Meta:
        indexes = ((("org", "domain", "day"), True), (("org", "day"), False))


class TlsReport(BaseModel):
    """An SMTP TLS report (RFC 8460): its JSON as received and its totals over its policies."""
    id = UlidField(primary_key=True, default=new_ulid)
    org = ForeignKeyField(Organization, backref="tls_reports", on_delete="CASCADE", index=False)
    dedupe_key = CharField(max_length=64)        # organization-name, report-id and period
    # SHA-256 of the JSON without whitespace: a resent copy or a conflicting one ("": before).
    content_digest = CharField(max_length=64, default="")
    org_name = CharField(max_length=255)
    report_id = CharField(max_length=255)
    contact_info = CharField(max_length=320, default="")
    date_begin = BigIntegerField()
    date_end = BigIntegerField()
    day_begin = DateField()
    day_end = DateField()
    policy_domains = JSONField(default=list)
    successful_sessions = BigIntegerField(default=0)
    failed_sessions = BigIntegerField(default=0)
    success_rate = FloatField(default=0.0)
    body = TextField()                           # the JSON text as received (decompressed)
    parse_warnings = JSONField(null=True)
    received_at = DateTimeField(default=utcnow)
    # What the report's mail proves of its origin (rules/authenticity.py): verified,
    # other_signer, failed, unsigned or unchecked (and why), and the signing domain.
    authenticity = CharField(max_length=12, default="unchecked")
    signed_by = CharField(max_length=253, default="")
    authenticity_reason = CharField(max_length=255, default="")

    class Meta:
        indexes = (
            (("org", "dedupe_key"), True),
            (("org", "date_end", "id"), False),
            (("org", "received_at", "id"), False),
            (("org", "failed_sessions", "id"), False),
        )


TlsReport.add_index(TlsReport.org, fn.LOWER(TlsReport.org_name), TlsReport.id,
                    name="tls_report_org_lower_org_name_id")


class TlsPolicy(BaseModel):
    """One policy of a TLS report: its domain and type, sessions, failed sessions by result type."""
    id = BigAutoField()
    report = ForeignKeyField(TlsReport, backref="policies", on_delete="CASCADE", index=False)
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    ordinal = IntegerField()
    policy_domain = CharField(max_length=253, default="")
    policy_type = CharField(max_length=32, default="")
    successful_sessions = BigIntegerField(default=0)
    failed_sessions = BigIntegerField(default=0)
    failures = JSONField(default=dict)           # {result type: failed sessions}, most first

    class Meta:
        indexes = ((("report", "ordinal"), True), (("org", "policy_domain", "report"), False))


class TlsDay(BaseModel):
    """Per org, policy domain and UTC day: the TLS sessions its reports counted."""
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    domain = CharField(max_length=253)
    day = DateField()
    reports = IntegerField(default=0)
    successful_sessions = BigIntegerField(default=0)
    failed_sessions = BigIntegerField(default=0)
    failures = JSONField(default=dict)           # {result type: failed sessions}
    policy_types = JSONField(default=list)
    last_report_end = BigIntegerField(default=0)

    class Meta:
        indexes = ((("org", "domain", "day"), True), (("org", "day"), False))


class ReportCopy(BaseModel):
    """A copy of a stored report (DMARC or TLS) with the same key but other content, kept
    aside: applied to no figure, ready to be put in place of the stored one by `rua report
    replace` (ingest/replacing.py). One row per content under a key, however often it came."""
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    kind = CharField(max_length=8)               # dmarc | tlsrpt
    dedupe_key = CharField(max_length=64)        # the stored report's (store/report_keys.py)
    content_digest = CharField(max_length=64)
    # received: the document as it came; stored: the rows rua kept of a DMARC report it
    # replaced (rua keeps no DMARC report's XML), as JSON.
    form = CharField(max_length=8, default="received")
    content = BlobField()                        # zlib-compressed
    org_name = CharField(max_length=255)
    report_id = CharField(max_length=255)
    domain = TextField(default="")               # TLS: its policy domains, comma-separated
    date_begin = BigIntegerField()
    date_end = BigIntegerField()
    # arrived: refused for the figures on arrival; replaced: set aside by an operator's replace.
    reason = CharField(max_length=8, default="arrived")
    received_at = DateTimeField(default=utcnow)
    # What the copy's mail proves of its origin (rules/authenticity.py): verified,
    # other_signer, failed, unsigned or unchecked (and why), and the signing domain.
    authenticity = CharField(max_length=12, default="unchecked")
    signed_by = CharField(max_length=253, default="")
    authenticity_reason = CharField(max_length=255, default="")

    class Meta:
        indexes = ((("org", "kind", "dedupe_key", "content_digest"), True),)


class Source(BaseModel):
    """A sending IP seen in an organization's reports: its totals, kept by ingest (ingest/
    source_facts.py), and what enrichment learned of it (sources/jobs.py). `ip` is the address
    in its canonical text (IPv6 compressed, lower case); `ip_key` orders addresses numerically."""
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    ip = CharField(max_length=64)
    ip_key = CharField(max_length=66, default="")
    spellings = JSONField(null=True)           # other texts reports gave the address (records')
    # What GET /sources?search= matches, lower case: the address, its domains, PTR and service
    # (store/addresses.py writes it).
    search_text = CharField(max_length=1000, default="")
    first_seen = DateTimeField()               # begin of the earliest report window
    last_seen = DateTimeField()                # end of the latest report window
    messages = BigIntegerField(default=0)
    compliant = BigIntegerField(default=0)
    spf_fail = BigIntegerField(default=0)      # messages without an aligned SPF pass
    dkim_fail = BigIntegerField(default=0)     # messages without an aligned DKIM pass
    auth_failures = BigIntegerField(default=0)     # spf_fail + dkim_fail, kept for its sort
    forwarded = BigIntegerField(default=0)     # failing messages classified likely_forwarded
    compliance_rate = FloatField(default=0.0)
    domain_count = IntegerField(default=0)
    ptr = CharField(max_length=253, null=True)
    fcrdns = CharField(max_length=8, default="unknown")
    base_domain = CharField(max_length=253, null=True)
    service_slug = CharField(max_length=64, null=True)
    service_name = CharField(max_length=128, null=True)
    service_icon = CharField(max_length=64, null=True)
    service_kind = CharField(max_length=32, null=True)
    abuse_status = CharField(max_length=16, default="unknown")
    blocklist = JSONField(null=True)           # {"status", "listed_on", "checked_at"}
    classification = CharField(max_length=16, default="unknown")
    verdict = JSONField(null=True)             # {"because": [...], "sentence": "..."}
    authorized = BooleanField(default=False)
    country = CharField(max_length=2, null=True)
    country_name = CharField(max_length=128, null=True)
    asn = BigIntegerField(null=True)
    as_org = CharField(max_length=255, null=True)
    enriched_at = DateTimeField(null=True)

    class Meta:
        # Only columns a report rarely changes; the sorts' indexes, which differ by database,
        # are made by store/migrations.py (SOURCE_SORT_INDEXES).
        indexes = (
            (("org", "ip"), True),
            (("org", "ip_key", "id"), False),
            (("org", "first_seen", "id"), False),
            (("org", "enriched_at"), False),
        )


class SourceDomain(BaseModel):
    """A source's messages for one policy domain, kept by ingest beside the daily rollups."""
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    domain = CharField(max_length=253)
    ip = CharField(max_length=64)              # canonical text, as Source.ip
    first_seen = DateTimeField()
    last_seen = DateTimeField()
    messages = BigIntegerField(default=0)
    compliant = BigIntegerField(default=0)
    spf_fail = BigIntegerField(default=0)
    dkim_fail = BigIntegerField(default=0)
    forwarded = BigIntegerField(default=0)
    quarantined = BigIntegerField(default=0)   # messages by disposition; the rest were none
    rejected = BigIntegerField(default=0)
    reports = IntegerField(default=0)          # reports that contributed: 1 on the first

    class Meta:
        # (org, ip, domain) holds a source's domains (covering); a domain's sources are indexed
        # as Source's sorts are (store/migrations.py, SOURCE_SORT_INDEXES).
        indexes = ((("org", "ip", "domain"), True),)


class Event(BaseModel):
    id = UlidField(primary_key=True, default=new_ulid)
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    type = CharField(max_length=32)
    severity = CharField(max_length=16)        # info, warning, critical
    title = CharField(max_length=255)
    detail = TextField(default="")
    domain = CharField(max_length=253, default="")
    link = CharField(max_length=512, null=True)
    acknowledged = BooleanField(default=False)
    # A condition is raised once until it clears: one open event per dedupe key.
    dedupe_key = CharField(max_length=255)
    cleared_at = DateTimeField(null=True)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = (
            (("org", "created_at", "id"), False),
            (("org", "dedupe_key"), False),
        )


# One open event per condition: raising is an insert this index turns away (store/events.py).
Event.add_index(Event.org, Event.dedupe_key, unique=True, where=Event.cleared_at.is_null(),
                name="event_open_org_dedupe_key")


class NotifyChannel(BaseModel):
    """Where an organization's deliverable events are pushed: a webhook URL or an e-mail address.

    `secret` is the webhook's whsec_ signing key, kept as issued: every message is signed with
    HMAC-SHA256 under it, and a hash could only check a key presented to it, never sign. It is
    shown once by `rua notify add` and never printed again."""
    id = UlidField(primary_key=True, default=new_ulid)
    org = ForeignKeyField(Organization, on_delete="CASCADE")
    kind = CharField(max_length=8)             # webhook, email
    target = CharField(max_length=2048)        # the URL or the address
    types = JSONField(null=True)               # event type codes; null: every deliverable type
    secret = CharField(max_length=64, null=True)
    created_at = DateTimeField(default=utcnow)


class Outbox(BaseModel):
    """One event to deliver to one channel, written in the event's transaction (store/outbox.py)."""
    id = UlidField(primary_key=True, default=new_ulid)
    event = ForeignKeyField(Event, on_delete="CASCADE", index=False)
    channel = ForeignKeyField(NotifyChannel, on_delete="CASCADE")
    # The Standard Webhooks webhook-id: the same on every attempt, so a receiver can dedupe.
    webhook_id = CharField(max_length=40, unique=True)
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField()
    # A drain's claim: rows it is sending until claimed_until; a crashed drain's rows come back.
    claim = CharField(max_length=26, null=True)
    claimed_until = DateTimeField(null=True)
    last_error = TextField(default="")
    delivered_at = DateTimeField(null=True)
    failed_at = DateTimeField(null=True)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("event", "channel"), True),)


# The drains' queue: rows neither delivered nor given up, by when they are due.
Outbox.add_index(Outbox.next_attempt_at, where=(Outbox.delivered_at.is_null()
                                               & Outbox.failed_at.is_null()),
                 name="outbox_pending")


class Snapshot(BaseModel):
    """A precomputed JSON body, served as stored."""
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    kind = CharField(max_length=32)            # overview, compliance, history, trends, health
    variant = CharField(max_length=300, default="")
    body = BlobField()
    etag = CharField(max_length=64)
    computed_at = DateTimeField()
    shape = CharField(max_length=16, default="")     # its body's shape version; "" for caches

    class Meta:
        indexes = ((("org", "kind", "variant"), True),)


class ScoreHistory(BaseModel):
    id = BigAutoField()
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    day = DateField()
    score = FloatField()
    grade = CharField(max_length=4)
    compliance_rate = FloatField()
    spf_rate = FloatField()
    dkim_rate = FloatField()
    total_messages = BigIntegerField()

    class Meta:
        indexes = ((("org", "day"), True),)


class Usage(BaseModel):
    """Requests per organization and key per UTC clock hour; key_id '' holds the org total (on
    SQLite kept by triggers, store/migrations.py; on Postgres written by store.usage).

    Stored through the `meter` proxy: on SQLite that is a file of its own (store/__init__.py),
    so the organization is a plain column there, not a foreign key into another file. Keyed by
    (org, key_id, hour), which every query reads by prefix; no other index.
    """
    org = CharField(max_length=26, column_name="org_id")
    key_id = CharField(max_length=26, default="")
    hour = BigIntegerField()                   # epoch seconds at the start of the hour
    allowed = IntegerField(default=0)
    rejected = IntegerField(default=0)
    heavy = IntegerField(default=0)            # heavy-route requests allowed (org total row)
    last_at = BigIntegerField(default=0)       # epoch seconds of the latest request counted
    # Key rows: the abuse window, admitted requests of the ten seconds up to `newest` packed
    # six bits a second (store/usage_sql.py).
    newest = BigIntegerField(default=0)
    ring = BigIntegerField(default=0)

    class Meta:
        database = meter
        primary_key = CompositeKey("org", "key_id", "hour")


class JobRun(BaseModel):
    """The last run of each scheduled job, whichever host ran it (store/job_runs.py)."""
    name = CharField(max_length=40, primary_key=True)
    started_at = DateTimeField()
    finished_at = DateTimeField(null=True)
    ok = BooleanField(null=True)
    runs = BigIntegerField(default=0)
    failures = BigIntegerField(default=0)


class IntakeAttempt(BaseModel):
    """A fetched message being read: the row outlives a reading that did not finish (the
    process died or was killed), so the third reading files it as refused (intake/poison.py)."""
    message = CharField(max_length=64, primary_key=True)    # SHA-256 of mailbox and message
    attempts = IntegerField(default=0)
    started_at = DateTimeField(default=utcnow)


class PageSession(BaseModel):
    """A person signed in to the pages with a key: only the digest of the cookie's random
    token is kept, so neither a backup nor a database reader can resume the session."""
    digest = CharField(max_length=64, primary_key=True)     # SHA-256 of the cookie's token
    key = ForeignKeyField(ApiKey, on_delete="CASCADE")
    created_at = DateTimeField(default=utcnow)
    last_seen_at = DateTimeField(index=True)


class PrunedAddress(BaseModel):
    """A sending address of a report whose records retention deleted: one row per report and
    distinct address, so `/reports?source_ip=` still finds the report (store/retention.py)."""
    id = BigAutoField()
    # (report) for the cascade when a report is removed; (org, source_ip) for the filter.
    report = ForeignKeyField(Report, on_delete="CASCADE")
    org = ForeignKeyField(Organization, on_delete="CASCADE", index=False)
    source_ip = CharField(max_length=64)

    class Meta:
        indexes = ((("org", "source_ip"), False),)


class SchemaVersion(BaseModel):
    version = IntegerField(primary_key=True)
    description = CharField(max_length=200)
    applied_at = DateTimeField(default=utcnow)


MODELS = [Organization, Member, ApiKey, Domain, Report, Record, DailyRollup, DomainDay,
          Source, SourceDomain, Event, NotifyChannel, Outbox, Snapshot, ScoreHistory, Usage,
          TlsReport, TlsPolicy, TlsDay, JobRun, IntakeAttempt, ReportCopy, PageSession,
          PrunedAddress]

__all__ = [m.__name__ for m in MODELS] + ["SchemaVersion", "MODELS", "SQL"]
