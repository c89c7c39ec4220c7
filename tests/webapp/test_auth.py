"""Authentication (401 codes and challenges), permissions (403) and key bookkeeping."""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

import pytest

from store import keys
from store.models import ApiKey, Organization
from tests.factories import make_key, make_member, make_org
from tests.webapp.helpers import assert_error, get
from webapp.auth import Authenticator, Principal

CHALLENGE = 'Bearer realm="rua"'
INVALID_TOKEN = 'Bearer realm="rua", error="invalid_token"'
ENDPOINTS = {"/enums": "analytics:read", "/domains": "domain:read"}


def _assert_401(resp, code, challenge=INVALID_TOKEN):
    assert_error(resp, 401, code)
    assert resp.headers["WWW-Authenticate"] == challenge


@pytest.mark.parametrize("path", sorted(ENDPOINTS))
def test_every_documented_get_needs_a_key(client, path):
    _assert_401(client.get("/api/v1" + path), "missing_key", CHALLENGE)


@pytest.mark.parametrize("header", ["", "Basic dXNlcjpwYXNz", "Token rua_x", "rua_" + "A" * 40])
def test_no_bearer_scheme_is_missing_key_without_an_error_attribute(client, header):
    _assert_401(client.get("/api/v1/enums", headers={"Authorization": header}), "missing_key", CHALLENGE)


@pytest.mark.parametrize("token", ["", "abc", "rua_" + "A" * 39, "rua_" + "A" * 41, "RUA_" + "A" * 40,
                                   "rua_" + "I" * 40, "rua_" + "a" * 40, "xyz_" + "A" * 40])
def test_a_token_not_shaped_like_a_key_is_malformed_key(client, token):
    _assert_401(get(client, "/enums", token), "malformed_key")


def test_a_well_formed_unknown_key_is_invalid_key(client, org):
    _assert_401(get(client, "/enums", keys.new_key()), "invalid_key")


def test_the_bearer_scheme_is_case_insensitive(client, key):
    assert client.get("/api/v1/enums", headers={"Authorization": f"bearer {key}"}).status_code == 200


def test_a_revoked_key_is_key_revoked(client, org):
    _, plaintext = make_key(org, revoked_at=datetime(2024, 1, 1))
    _assert_401(get(client, "/enums", plaintext), "key_revoked")


def test_an_expired_key_is_key_expired(client, clock, org):
    clock.now = datetime(2025, 6, 1, 12, 0, 0)
    _, past = make_key(org, expires_at=clock.now)
    _, future = make_key(org, expires_at=clock.now + timedelta(seconds=1))
    _assert_401(get(client, "/enums", past), "key_expired")
    assert get(client, "/enums", future).status_code == 200


def test_an_organization_without_api_access_is_not_entitled(client):
    _, plaintext = make_key(make_org(plan="none"))
    _assert_401(get(client, "/enums", plaintext), "not_entitled")


def test_a_key_whose_member_belongs_to_another_organization_is_invalid(client, org):
    stranger = make_member(make_org())
    _, plaintext = make_key(org, member=stranger)
    _assert_401(get(client, "/enums", plaintext), "invalid_key")


@pytest.mark.parametrize("role, path, allowed", [
    (role, path, ENDPOINTS[path] in allowed)
    for role, allowed in {
        "owner": {"analytics:read", "domain:read"}, "admin": {"analytics:read", "domain:read"},
        "analyst": {"analytics:read", "domain:read"}, "viewer": {"analytics:read", "domain:read"},
        "billing": set()}.items()
    for path in ENDPOINTS])
@pytest.mark.parametrize("scope", ["read", "full"])
def test_the_owner_role_decides_and_both_scopes_allow_every_endpoint(client, org, role, path, allowed, scope):
    _, plaintext = make_key(org, scope=scope, role=role)
    resp = get(client, path, plaintext)
    if allowed:
        assert resp.status_code == 200
    else:
        assert_error(resp, 403, "insufficient_permission", required=ENDPOINTS[path])


@pytest.mark.parametrize("role, permission, allowed", [
    ("owner", "integration:read", True), ("admin", "report:read", True),
    ("analyst", "integration:read", False), ("analyst", "report:read", True),
    ("viewer", "report:read", False), ("viewer", "alert:read", True),
    ("billing", "integration:read", True), ("billing", "analytics:read", False),
    ("stranger", "report:read", False)])
def test_role_table_of_decisions(role, permission, allowed):
    assert Principal("o", "k", "m", "read", role, "free").allows(permission) is allowed
    assert Principal("o", "k", "m", "nonsense", role, "free").allows(permission) is False


def test_the_principal_names_the_key_its_member_and_the_plan(app, org):
    row, plaintext = make_key(org, scope="full", role="analyst")
    principal = Authenticator().authenticate(f"Bearer {plaintext}", datetime(2025, 1, 1))
    assert principal == Principal(org.id, row.id, row.member_id, "full", "analyst", "team")


def test_last_used_at_is_written_once_a_day_at_most(client, clock, org):
    row, plaintext = make_key(org)
    first = clock.now = datetime(2025, 6, 1, 12, 0, 0)
    get(client, "/enums", plaintext)
    assert ApiKey.get_by_id(row.id).last_used_at == first
    clock.now = first + timedelta(hours=23, minutes=59)
    get(client, "/enums", plaintext)
    assert ApiKey.get_by_id(row.id).last_used_at == first
    clock.now = first + timedelta(days=1, seconds=1)
    get(client, "/enums", plaintext)
    assert ApiKey.get_by_id(row.id).last_used_at == clock.now


def test_the_usage_endpoint_has_the_last_use_to_the_second_between_writes_of_the_key_row(
        client, clock, org):
    used, plaintext = make_key(org, name="poller")
    _, admin = make_key(org, name="admin", role="owner")
    for clock.now in (datetime(2025, 6, 1, 12, 0, 0), datetime(2025, 6, 1, 12, 30, 5)):
        get(client, "/enums", plaintext)
    keys = {k["name"]: k for k in get(client, "/api-keys/usage", admin).get_json()["keys"]}
    assert ApiKey.get_by_id(used.id).last_used_at == datetime(2025, 6, 1, 12, 0, 0)
    assert keys["poller"]["last_used_at"] == "2025-06-01T12:30:05Z"


def test_a_key_revoked_between_two_requests_is_refused_on_the_second(client, org):
    row, plaintext = make_key(org)
    assert get(client, "/enums", plaintext).status_code == 200
    ApiKey.update(revoked_at=datetime(2025, 1, 1)).where(ApiKey.id == row.id).execute()
    _assert_401(get(client, "/enums", plaintext), "key_revoked")


def test_the_plan_is_read_with_the_key(client, org):
    _, plaintext = make_key(org)
    Organization.update(plan="none").where(Organization.id == org.id).execute()
    _assert_401(get(client, "/enums", plaintext), "not_entitled")


class _KeyLookups(logging.Handler):
    """Counts the key look-ups peewee runs (SELECTs from api_key; on Postgres the statement
    that looks the key up and meters the request)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record):
        sql = str(record.msg[0])
        self.count += (sql.startswith("EXECUTE rua_key_by_digest")
                       or (not sql.startswith("PREPARE") and "FROM api_key k" in sql))


@pytest.fixture
def key_lookups():
    logger, counter = logging.getLogger("peewee"), _KeyLookups()
    level = logger.level
    logger.addHandler(counter)
    logger.setLevel(logging.DEBUG)
    yield counter
    logger.removeHandler(counter)
    logger.setLevel(level)


def test_a_key_is_looked_up_once_while_the_store_is_unchanged_on_sqlite_and_every_time_on_postgres(
        client, org, config, key_lookups):
    _, plaintext = make_key(org, last_used_at=datetime.utcnow())
    for _ in range(3):
        assert get(client, "/enums", plaintext).status_code == 200
    assert key_lookups.count == (1 if config.is_sqlite else 3)


def test_a_key_revoked_by_another_process_is_refused_on_the_next_request(client, org, config):
    if not config.is_sqlite:
        pytest.skip("Postgres looks every key up on every request")
    import sqlite3
    row, plaintext = make_key(org, last_used_at=datetime.utcnow())
    assert get(client, "/enums", plaintext).status_code == 200
    other = sqlite3.connect(config.database_url[len("sqlite:///"):], isolation_level=None)
    other.execute("UPDATE api_key SET revoked_at = '2025-01-01 00:00:00' WHERE id = ?", (row.id,))
    other.close()
    _assert_401(get(client, "/enums", plaintext), "key_revoked")


def test_a_key_that_expires_between_two_requests_is_refused_with_nothing_written(client, clock, org):
    clock.now = datetime(2025, 6, 1, 12, 0, 0)
    _, plaintext = make_key(org, expires_at=clock.now + timedelta(seconds=5), last_used_at=clock.now)
    assert get(client, "/enums", plaintext).status_code == 200
    clock.now += timedelta(seconds=5)
    _assert_401(get(client, "/enums", plaintext), "key_expired")
