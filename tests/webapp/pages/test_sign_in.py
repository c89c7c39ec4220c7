"""Sign-in with an API key, sessions kept in the store by their digest, and sign-out."""
from __future__ import annotations

from datetime import timedelta

import store
from store.models import ApiKey, PageSession
from tests.factories import make_key, make_org
from tests.webapp.pages.conftest import sign_in
from webapp import create_app


def test_a_page_without_a_session_redirects_to_sign_in_with_the_page_asked_for(client, org):
    resp = client.get("/domains/example.com?days=90")
    assert resp.status_code == 302
    assert resp.headers["Location"] == "/sign-in?next=/domains/example.com?days%3D90"


def test_signing_in_lands_on_the_page_first_asked_for(client, monitored, key):
    resp = sign_in(client, key, "/domains/example.com?days=90")
    assert resp.status_code == 303 and resp.headers["Location"] == "/domains/example.com?days=90"
    assert client.get("/domains/example.com?days=90").status_code == 200


def test_only_local_paths_are_followed_after_signing_in(client, org, key):
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example", "evil", ""):
        assert sign_in(client, key, target).headers["Location"] == "/"


def test_the_cookie_holds_a_random_token_whose_digest_alone_is_stored(client, org, key):
    resp = sign_in(client, key)
    cookie = next(c for c in resp.headers.getlist("Set-Cookie") if c.startswith("rua_session="))
    token = cookie.split(";")[0].split("=", 1)[1]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    assert key not in cookie
    [row] = PageSession.select()
    assert row.digest != token and len(row.digest) == 64 and token not in row.digest


def test_over_https_behind_a_trusted_proxy_the_cookie_is_secure(config, database, clock):
    app = create_app(config.replace(proxies=1), clock=clock)
    client = app.test_client()
    with store.db.obj.connection_context():
        key = make_key(make_org())[1]
    client.get("/sign-in", headers={"X-Forwarded-Proto": "https"})
    token = client.get_cookie("rua_form").value
    resp = client.post("/sign-in", data={"key": key, "form_token": token},
                       headers={"X-Forwarded-Proto": "https"})
    assert any("Secure" in c for c in resp.headers.getlist("Set-Cookie"))


def test_a_wrong_key_shows_the_form_again_with_the_reason(client, org):
    resp = sign_in(client, "rua_" + "0" * 40)
    assert resp.status_code == 401 and b"No key matches" in resp.data
    assert sign_in(client, "not a key").status_code == 401
    assert PageSession.select().count() == 0


def test_a_form_without_its_token_is_refused(client, org, key):
    resp = client.post("/sign-in", data={"key": key})
    assert resp.status_code == 400 and b"The form had expired" in resp.data
    assert PageSession.select().count() == 0


def test_signing_out_ends_the_session(signed_in):
    token = signed_in.get_cookie("rua_form").value
    resp = signed_in.post("/sign-out", data={"form_token": token})
    assert resp.status_code == 303 and resp.headers["Location"] == "/sign-in"
    assert PageSession.select().count() == 0
    assert signed_in.get("/").status_code == 302


def test_signing_out_needs_the_form_token(signed_in):
    assert signed_in.post("/sign-out").status_code == 400
    assert PageSession.select().count() == 1


def test_a_revoked_key_ends_its_session_at_the_next_page(signed_in, monitored, clock, key):
    ApiKey.update(revoked_at=clock.now).execute()
    resp = signed_in.get("/")
    assert resp.status_code == 302 and "ended=key_revoked" in resp.headers["Location"]
    assert PageSession.select().count() == 0
    assert b"was revoked" in signed_in.get(resp.headers["Location"]).data


def test_an_expired_key_ends_its_session(signed_in, monitored, clock):
    ApiKey.update(expires_at=clock.now - timedelta(seconds=1)).execute()
    assert "ended=key_expired" in signed_in.get("/").headers["Location"]


def test_a_session_ends_after_the_idle_time(client, monitored, clock, key, config):
    sign_in(client, key)
    assert client.get("/").status_code == 200
    clock.now = clock.now + timedelta(minutes=config.session_idle_minutes + 2)
    resp = client.get("/")
    assert resp.status_code == 302 and "ended=session_idle" in resp.headers["Location"]


def test_a_page_view_keeps_the_session_alive(client, monitored, clock, key, config):
    sign_in(client, key)
    for _ in range(3):
        clock.now = clock.now + timedelta(minutes=config.session_idle_minutes - 5)
        assert client.get("/").status_code == 200


def test_signing_in_again_replaces_the_browsers_session(signed_in, key):
    first = signed_in.get_cookie("rua_session").value
    sign_in(signed_in, key)
    assert signed_in.get_cookie("rua_session").value != first
    assert PageSession.select().count() == 1
