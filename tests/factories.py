"""Small factories with keyword overrides, so a test states only what it is about."""
from __future__ import annotations

from datetime import datetime, timezone

from store import keys
from store.models import ApiKey, Domain, Member, Organization

_counter = iter(range(1, 10**9))


def epoch(text: str) -> int:
    """Seconds since the epoch of a UTC time written "2024-01-05T06:00:00", as reports hold it."""
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp())


def make_org(name: str | None = None, plan: str = "free") -> Organization:
    return Organization.create(name=name or f"org-{next(_counter)}", plan=plan)


def make_member(org, email: str | None = None, role: str = "owner") -> Member:
    return Member.create(org=org, email=email or f"user{next(_counter)}@example.com", role=role)


def make_key(org, scope: str = "read", role: str = "owner", member=None, **fields):
    """An API key row and its plaintext (the only time a key exists in the clear)."""
    member = member or make_member(org, role=role)
    plaintext = keys.new_key()
    row = ApiKey.create(org=org, member=member, digest=keys.digest(plaintext),
                        prefix=keys.display_prefix(plaintext), scope=scope, **fields)
    return row, plaintext


def make_domain(org, name: str = "example.com", source: str = "manual", **fields) -> Domain:
    return Domain.create(org=org, name=name, source=source, **fields)


def make_record(domain: str = "example.com", **fields):
    """A ParsedRecord that passes DMARC for `domain` unless fields say otherwise."""
    from ingest.model import ParsedRecord
    passing = {"source_ip": "192.0.2.1", "count": 1, "disposition": "none", "dkim": "pass",
               "spf": "pass", "reasons": None, "envelope_to": "", "envelope_from": domain,
               "header_from": domain,
               "auth_dkim": [{"Domain": domain, "Selector": "s1", "Result": "pass", "HumanResult": ""}],
               "auth_spf": [{"Domain": domain, "Scope": "mfrom", "Result": "pass", "HumanResult": ""}]}
    return ParsedRecord(**{**passing, **fields})


def parsed_report(domain: str = "example.com", records=None, *, warnings=None, **meta):
    """A ParsedReport for `domain`; records are ParsedRecords or dicts of make_record overrides."""
    from ingest.model import ParsedReport, ReportMeta
    from store.clock import to_epoch, utcnow
    midnight = to_epoch(utcnow()) // 86400 * 86400
    fields = {"org_name": "reporter.example", "report_id": f"report-{next(_counter)}",
              "date_begin": midnight - 86400, "date_end": midnight, "domain": domain,
              "adkim": "r", "aspf": "r", "p": "none", **meta}
    rows = [make_record(domain)] if records is None else [
        r if not isinstance(r, dict) else make_record(domain, **r) for r in records]
    return ParsedReport(origin=f"{fields['report_id']}.xml", meta=ReportMeta(**fields),
                        records=iter(rows), warnings=list(warnings or []))


def make_report(org, domain: str = "example.com", records=None, *, received_at=None,
                warnings=None, provenance=None, **meta):
    """A report stored for `org` through the real storer (rollups, domains and all); its Report row.

    records: ParsedRecords or dicts of overrides (e.g. {"source_ip": "198.51.100.7", "count": 40,
    "dkim": "fail", "spf": "fail"}); meta: ReportMeta fields (org_name, report_id, date_begin,
    date_end, p, pct, ...). The window defaults to yesterday (UTC). provenance: what its mail
    proves (rules/authenticity.Provenance; none: not from mail).
    """
    from ingest.storing import store_report
    parsed = parsed_report(domain, records, warnings=warnings, **meta)
    return store_report(parsed, org=org, received_at=received_at, provenance=provenance).report


def make_usage(org, hour: int, key_id: str = "", **counts):
    """A Usage row: an hour (epoch of its start) already counted for the org ('') or a key."""
    from store.models import Usage
    return Usage.create(org=org, key_id=key_id, hour=hour, **counts)


def make_tls_report(org, policies=None, *, received_at=None, provenance=None, **fields):
    """A TLS report stored for `org` through the real storer; its TlsReport row.

    policies: tests/ingest/tlsbuild.policy() entries; fields: tlsbuild.report()'s keywords
    (org_name, report_id, start, end, contact); provenance as for make_report."""
    import json

    from ingest.tls_report import parse
    from ingest.tls_storing import store_tls_report
    from tests.ingest import tlsbuild
    data = json.dumps(tlsbuild.report(policies, **fields)).encode()
    from rules.authenticity import NOT_FROM_MAIL
    return store_tls_report(parse(data, "r.json"), org=org, received_at=received_at,
                            provenance=provenance or NOT_FROM_MAIL).report
