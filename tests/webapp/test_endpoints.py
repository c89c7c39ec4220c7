"""What every endpoint of this part shares: a key (401), a permission (403), GET and HEAD only."""
from __future__ import annotations

import pytest

from tests.factories import make_key
from tests.webapp.helpers import assert_error, get

ENDPOINTS = {
    "/reports": "report:read",
    "/reports/date-range": "report:read",
    "/reports/01HQ3Z7K8V9W0X1Y2Z3A4B5C6D": "report:read",
    "/statistics": "analytics:read",
    "/top-sources": "analytics:read",
    "/enums": "analytics:read",
    "/domains": "domain:read",
}
LACKING = {"report:read": "viewer", "analytics:read": "billing", "domain:read": "billing"}


@pytest.mark.parametrize("path", ENDPOINTS)
def test_no_key_is_401_missing_key(client, path):
    resp = get(client, path)
    assert_error(resp, 401, "missing_key")
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="rua"'


@pytest.mark.parametrize("path", ENDPOINTS)
def test_an_unknown_key_is_401_invalid_key(client, org, path):
    resp = get(client, path, "rua_" + "0" * 40)
    assert_error(resp, 401, "invalid_key")
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="rua", error="invalid_token"'


@pytest.mark.parametrize("path, permission", ENDPOINTS.items())
def test_a_role_without_the_permission_is_403_with_required(client, org, path, permission):
    _, plaintext = make_key(org, role=LACKING[permission], scope="full")
    assert_error(get(client, path, plaintext), 403, "insufficient_permission", required=permission)


@pytest.mark.parametrize("path", ENDPOINTS)
def test_the_403_comes_before_any_400(client, org, path):
    _, plaintext = make_key(org, role="billing")
    bad = path + "?domain=not_a_domain&from=2024-02-30" if "/reports/" not in path else "/reports/nope"
    assert get(client, bad, plaintext).status_code == 403


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_other_methods_are_405_with_allow_and_no_body(client, path, method):
    resp = client.open("/api/v1" + path, method=method)
    assert (resp.status_code, resp.headers["Allow"], resp.get_data()) == (405, "GET, HEAD", b"")
    assert "Content-Type" not in resp.headers


@pytest.mark.parametrize("path", [p for p in ENDPOINTS if "01HQ" not in p])
def test_head_answers_like_get_without_a_body(client, key, path):
    full = get(client, path, key)
    head = client.head("/api/v1" + path, headers={"Authorization": f"Bearer {key}"})
    assert (head.status_code, head.get_data()) == (200, b"")
    assert head.headers["Content-Type"] == full.headers["Content-Type"]
