"""`rua key create|list|revoke`: a key is printed once, stored only as its digest, listed after revocation."""
from __future__ import annotations

import datetime

import pytest

from store import keys
from store.models import ApiKey
from tests.cli.outcome import assert_refused, ok
from tests.factories import make_key, make_org, make_usage


def every_stored_value(database):
    """Every value of every column of every table, as text, for secrets that must not be there."""
    for table in database.get_tables():
        for row in database.execute_sql(f'SELECT * FROM "{table}"').fetchall():
            for value in row:
                if isinstance(value, (bytes, bytearray, memoryview)):
                    value = bytes(value).decode("latin-1")
                yield table, str(value)


def test_key_create_prints_the_key_alone_on_the_last_line_once(rua, acme):
    result = rua("key", "create", "Acme", "--member", "ana@example.com", "--name", "grafana")
    plaintext = ok(result)[-1]
    assert keys.well_formed(plaintext)
    assert result.stdout.count(plaintext) == 1 and plaintext not in result.stderr
    row = ApiKey.get(ApiKey.org == acme)
    assert (row.name, row.scope, row.expires_at, row.revoked_at) == ("grafana", "read", None, None)
    assert row.digest == keys.digest(plaintext) and row.prefix == plaintext[:12]
    assert row.member.email == "ana@example.com"


def test_key_create_never_stores_the_key(rua, acme, database):
    plaintext = ok(rua("key", "create", "Acme", "--member", "ana@example.com"))[-1]
    body = plaintext[len("rua_"):]
    leaks = [(table, value) for table, value in every_stored_value(database)
             if plaintext in value or body in value]
    assert leaks == []


def test_key_create_takes_scope_expiry_and_the_org_by_id(rua, acme):
    ok(rua("key", "create", acme.id.lower(), "--member", "ana@example.com", "--scope", "full",
           "--expires", "2099-01-31"))
    row = ApiKey.get(ApiKey.org == acme)
    assert row.scope == "full" and row.expires_at == datetime.datetime(2099, 1, 31)


def test_key_create_for_an_org_without_api_access_warns(rua, acme):
    acme.plan = "none"
    acme.save()
    result = rua("key", "create", "Acme", "--member", "ana@example.com")
    assert keys.well_formed(ok(result)[-1]) and "plan none" in result.stderr


@pytest.mark.parametrize("args, fragment", [
    (("Nobody", "--member", "ana@example.com"), "no organization 'Nobody'"),
    (("Acme", "--member", "bob@example.com"), "'bob@example.com' is not a member of Acme"),
    (("Beta", "--member", "ana@example.com"), "is not a member of Beta"),
    (("Acme", "--member", "ana@example.com", "--scope", "admin"), "unknown scope 'admin'"),
    (("Acme", "--member", "ana@example.com", "--expires", "31/01/2099"), "not a date"),
    (("Acme", "--member", "ana@example.com", "--expires", "20990131"), "not a date"),
    (("Acme", "--member", "ana@example.com", "--expires", "2099-02-30"), "not a date"),
    (("Acme", "--member", "ana@example.com", "--expires", "2020-01-01"), "not in the future"),
    (("Acme", "--member", "ana@example.com", "--name", "n" * 201), "at most 200"),
    (("Acme", "--member", "ana@example.com", "--name", "tab\there"), "control characters"),
])
def test_key_create_refuses_bad_input_and_writes_nothing(rua, acme, args, fragment):
    make_org("Beta")
    assert_refused(rua("key", "create", *args), fragment)
    assert ApiKey.select().count() == 0


def test_key_list_shows_id_name_prefix_scope_last_use_and_state(rua, acme):
    used, _ = make_key(acme, name="grafana", last_used_at=datetime.datetime(2026, 3, 1, 8, 0, 5))
    fresh, _ = make_key(acme, scope="full", expires_at=datetime.datetime(2099, 1, 1))
    rows = {line.split()[0]: line.split()[1:] for line in ok(rua("key", "list", "Acme"))}
    assert rows == {
        used.id: ["grafana", used.prefix, "read", "last", "used", "2026-03-01T08:00:05Z", "active"],
        fresh.id: ["-", fresh.prefix, "full", "last", "used", "never", "expires", "2099-01-01T00:00:00Z"],
    }


def test_key_list_takes_the_second_of_the_last_use_from_the_request_counters(rua, acme):
    used, _ = make_key(acme, name="grafana", last_used_at=datetime.datetime(2026, 3, 1, 8, 0, 5))
    last = datetime.datetime(2026, 3, 1, 9, 41, 7, tzinfo=datetime.timezone.utc).timestamp()
    make_usage(acme, hour=int(last) // 3600 * 3600, key_id=used.id, allowed=3, last_at=int(last))
    (line,) = ok(rua("key", "list", "Acme"))
    assert "last used 2026-03-01T09:41:07Z" in line


def test_a_revoked_key_stays_listed(rua, acme):
    row, _ = make_key(acme, name="old")
    ok(rua("key", "revoke", row.id))
    revoked_at = ApiKey.get_by_id(row.id).revoked_at
    assert revoked_at is not None
    (line,) = ok(rua("key", "list", "Acme"))
    assert line.startswith(row.id) and f"revoked {revoked_at:%Y-%m-%dT%H:%M:%SZ}" in line


def test_revoking_twice_keeps_the_first_time(rua, acme):
    row, _ = make_key(acme, revoked_at=datetime.datetime(2026, 1, 2, 3, 4, 5))
    assert "already revoked at 2026-01-02T03:04:05Z" in ok(rua("key", "revoke", row.id.lower()))[0]
    assert ApiKey.get_by_id(row.id).revoked_at == datetime.datetime(2026, 1, 2, 3, 4, 5)


@pytest.mark.parametrize("key_id", ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-an-id"])
def test_revoking_an_unknown_key_is_refused(rua, acme, key_id):
    make_key(acme)
    assert_refused(rua("key", "revoke", key_id), f"no API key with id '{key_id}'")
    assert ApiKey.select().where(ApiKey.revoked_at.is_null(False)).count() == 0


def test_key_list_of_an_unknown_org_is_refused(rua):
    assert_refused(rua("key", "list", "Nobody"), "no organization 'Nobody'")
