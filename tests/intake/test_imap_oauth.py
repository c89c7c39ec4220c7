"""`rua fetch imap` with OAuth 2.0: a real Dovecot whose oauth2 passdb asks a test token server.

msal and google-auth run their own code against the token server (authority and token URL
overridden, its trustme CA in REQUESTS_CA_BUNDLE); Dovecot checks each token by introspection.
"""
from __future__ import annotations

import json
import os
import time
from datetime import timedelta

import pytest
import trustme

from config import Config
from intake import oauth
from intake.jobs import fetch_configured
from jobs.scheduler import run_exclusive
from jobs.table import job_table
from store.job_runs import JobFailed
from store.clock import utcnow
from store.models import Report
from tests.cli.outcome import assert_refused
from tests.intake import dovecot, token_server
from tests.intake.conftest import Box, report_mail, watching
from tests.servers import free_port

pytestmark = pytest.mark.slow       # Dovecot and a token server per session

TENANT, CLIENT, SECRET = "0b8f2c1e-tenant", "5d3a9e77-client", "app-secret-value"
SERVICE_ACCOUNT = "rua-reader@rua-tests.iam.gserviceaccount.com"


@pytest.fixture(scope="session")
def token_endpoint(request):
    ca = trustme.CA()
    server, httpd = token_server.start(ca)
    request.addfinalizer(lambda: token_server.stop(server, httpd))
    return server


def _oauth_dovecot(request, token_endpoint, **options):
    try:
        server = dovecot.start(token_endpoint.ca,
                               introspection_url=token_endpoint.introspection_url, **options)
    except (RuntimeError, OSError) as exc:
        pytest.skip(f"no IMAP server for the OAuth tests: {exc}")
    request.addfinalizer(lambda: dovecot.stop(server))
    return server


@pytest.fixture(scope="session")
def oauth_imap_server(request, token_endpoint):
    """Dovecot taking PLAIN (the tests' own seeding), XOAUTH2 and OAUTHBEARER."""
    return _oauth_dovecot(request, token_endpoint)


@pytest.fixture(scope="session")
def bearer_only_imap_server(request, token_endpoint):
    """Dovecot that offers OAUTHBEARER and not XOAUTH2."""
    return _oauth_dovecot(request, token_endpoint, oauth_mechanisms=("oauthbearer",))


@pytest.fixture
def tokens(token_endpoint, monkeypatch):
    """The token server emptied, trusted by requests, and rua's in-memory tokens forgotten."""
    token_endpoint.reset()
    oauth.tokens_for.cache_clear()
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", token_endpoint.ca_file)
    yield token_endpoint
    oauth.tokens_for.cache_clear()


@pytest.fixture
def box(oauth_imap_server, monkeypatch, tmp_path):
    return Box(oauth_imap_server, monkeypatch, tmp_path)


def microsoft(tokens, monkeypatch, tmp_path, *, mailboxes=(dovecot.USER,), certificate=False,
              **settings) -> token_server.App:
    """An app registered in TENANT and rua's settings for it (a secret file or a certificate)."""
    app = token_server.App(TENANT, CLIENT, mailboxes=tuple(mailboxes))
    env = {"RUA_IMAP_AUTH": "microsoft", "RUA_IMAP_OAUTH_TENANT": TENANT,
           "RUA_IMAP_OAUTH_CLIENT_ID": CLIENT, "RUA_IMAP_OAUTH_AUTHORITY": tokens.base}
    if certificate:
        pem, app.certificate = token_server.app_certificate()
        (tmp_path / "app.pem").write_text(pem)
        env["RUA_IMAP_OAUTH_CERT_FILE"] = str(tmp_path / "app.pem")
    else:
        app.secret = SECRET
        (tmp_path / "client-secret").write_text(SECRET + "\n")
        env["RUA_IMAP_OAUTH_SECRET_FILE"] = str(tmp_path / "client-secret")
    tokens.apps[(TENANT, CLIENT)] = app
    env.update(settings)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return app


def google(tokens, monkeypatch, tmp_path, *, delegated=(token_server.GMAIL_SCOPE,),
           user=dovecot.USER, **settings) -> dict:
    """A service account delegated the Gmail scope, `user` in the Workspace, and rua's settings."""
    key = token_server.service_account_key(tokens, SERVICE_ACCOUNT, delegated=delegated)
    tokens.users.add(user)
    (tmp_path / "service-account.json").write_text(json.dumps(key))
    env = {"RUA_IMAP_AUTH": "google",
           "RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE": str(tmp_path / "service-account.json"),
           "RUA_IMAP_OAUTH_TOKEN_URL": tokens.google_token_url, **settings}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return key


def logins(server, method: str) -> int:
    return server.log().count(f"user=<{dovecot.USER}>, method={method}")


def logged_logins(server, method: str, count: int) -> bool:
    """Whether at least `count` logins with `method` reach Dovecot's log (its log process
    writes them a moment after the login itself)."""
    deadline = time.monotonic() + token_server.WAIT_SECONDS
    while logins(server, method) < count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def stored_ids() -> list[str]:
    return sorted(r.report_id for r in Report.select(Report.report_id))


def test_a_fetch_over_xoauth2_stores_every_report_once_and_files_the_messages(
        rua, acme, box, tokens, monkeypatch, tmp_path, oauth_imap_server):
    microsoft(tokens, monkeypatch, tmp_path)
    before = logins(oauth_imap_server, "XOAUTH2")
    box.append(report_mail("r-1"), report_mail("r-2", kind="zip"))
    result = rua("fetch", "imap")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert stored_ids() == ["r-1", "r-2"]
    assert box.subjects(box.done) == ["Report r-1", "Report r-2"]
    assert box.subjects(box.inbox) == []
    box.append(report_mail("r-1"))
    again = rua("fetch", "imap")
    assert again.exit_code == 0 and again.stdout.startswith(f"duplicate  {box.inbox};UID=3 ")
    assert stored_ids() == ["r-1", "r-2"]
    assert len(tokens.issued) == 1              # the second run took the token kept in memory
    assert logged_logins(oauth_imap_server, "XOAUTH2", before + 2), oauth_imap_server.log()


def test_a_certificate_takes_the_place_of_a_secret(rua, acme, box, tokens, monkeypatch,
                                                   tmp_path):
    microsoft(tokens, monkeypatch, tmp_path, certificate=True)
    box.append(report_mail("r-1"))
    result = rua("fetch", "imap")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert stored_ids() == ["r-1"] and box.subjects(box.done) == ["Report r-1"]


def test_a_google_service_account_acts_for_the_mailbox_user(rua, acme, box, tokens,
                                                            monkeypatch, tmp_path):
    google(tokens, monkeypatch, tmp_path)
    box.append(report_mail("r-1"))
    result = rua("fetch", "imap")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert stored_ids() == ["r-1"] and box.subjects(box.done) == ["Report r-1"]
    assert [issued.mailboxes for issued in tokens.issued] == [(dovecot.USER,)]


def test_oauthbearer_where_the_server_offers_no_xoauth2(rua, acme, tokens, monkeypatch, tmp_path,
                                                        bearer_only_imap_server):
    box = Box(bearer_only_imap_server, monkeypatch, tmp_path)
    microsoft(tokens, monkeypatch, tmp_path)
    box.append(report_mail("r-1"))
    result = rua("fetch", "imap")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert box.subjects(box.done) == ["Report r-1"]
    assert logged_logins(bearer_only_imap_server, "OAUTHBEARER", 1)


def test_a_server_that_takes_no_token_is_one_line(rua, acme, tokens, monkeypatch, tmp_path,
                                                 imap_server):
    box = Box(imap_server, monkeypatch, tmp_path)         # Dovecot with passwords only
    microsoft(tokens, monkeypatch, tmp_path)
    box.append(report_mail("r-1"))
    assert_refused(rua("fetch", "imap"), "offers neither AUTH=XOAUTH2 nor AUTH=OAUTHBEARER")
    assert box.subjects(box.inbox) == ["Report r-1"] and box.subjects(box.done) == []


def _revoke_secret(tokens):
    tokens.apps[(TENANT, CLIENT)].secret = ""


def _revoke_key(tokens):
    tokens.accounts.clear()


@pytest.mark.parametrize("provider, settings, change, fragments", [
    pytest.param("microsoft", {}, _revoke_secret,
                 ["Microsoft 365 refused a token to app 5d3a9e77-client in tenant "
                  "0b8f2c1e-tenant for mailbox dmarc", "invalid_client: AADSTS7000215",
                  "correlation id ", "trace id ", "the client secret is wrong or was deleted"],
                 id="revoked-client"),
    pytest.param("microsoft", {"RUA_IMAP_OAUTH_TENANT": "no-such-tenant"}, None,
                 ["in tenant no-such-tenant for mailbox dmarc", "invalid_tenant: AADSTS90002",
                  "correlation id ", "no such tenant: RUA_IMAP_OAUTH_TENANT"],
                 id="wrong-tenant"),
    pytest.param("microsoft", {"RUA_IMAP_OAUTH_CLIENT_ID": "someone-else"}, None,
                 ["app someone-else in tenant", "AADSTS700016", "check RUA_IMAP_OAUTH_CLIENT_ID"],
                 id="unknown-app"),
    pytest.param("microsoft-without-permission", {}, None,
                 ["IMAP login as dmarc at 127.0.0.1:", "refused the token of app "
                  "5d3a9e77-client in tenant 0b8f2c1e-tenant",
                  "the app has no IMAP.AccessAsApp permission", "mailbox is not granted"],
                 id="missing-permission"),
    pytest.param("microsoft", {"RUA_IMAP_OAUTH_AUTHORITY": "https://127.0.0.1:{closed}"}, None,
                 ["cannot reach Microsoft's token endpoint at https://127.0.0.1:",
                  "for app 5d3a9e77-client in tenant 0b8f2c1e-tenant for mailbox dmarc",
                  "Connection refused"],
                 id="unreachable-token-endpoint"),
    pytest.param("google", {}, _revoke_key,
                 [f"Google refused a token to service account {SERVICE_ACCOUNT}",
                  "for mailbox dmarc", "invalid_grant: Invalid JWT Signature",
                  "was deleted or revoked"],
                 id="google-revoked-key"),
    pytest.param("google-not-delegated", {}, None,
                 ["unauthorized_client", "domain-wide delegation is not granted",
                  "with the scope https://mail.google.com/"],
                 id="google-missing-delegation"),
    pytest.param("google", {"RUA_IMAP_OAUTH_TOKEN_URL": "https://127.0.0.1:{closed}/token"},
                 None, ["cannot reach Google's token endpoint https://127.0.0.1:",
                        "Connection refused"],
                 id="google-unreachable-token-endpoint"),
])
def test_a_refused_or_unreachable_provider_is_one_line_and_the_mailbox_is_untouched(
        rua, acme, box, tokens, monkeypatch, tmp_path, provider, settings, change, fragments):
    closed = free_port()
    settings = {name: value.format(closed=closed) for name, value in settings.items()}
    if provider.startswith("microsoft"):
        mailboxes = () if provider.endswith("without-permission") else (dovecot.USER,)
        microsoft(tokens, monkeypatch, tmp_path, mailboxes=mailboxes, **settings)
    else:
        delegated = () if provider.endswith("not-delegated") else (token_server.GMAIL_SCOPE,)
        google(tokens, monkeypatch, tmp_path, delegated=delegated, **settings)
    if change:
        change(tokens)
    box.append(report_mail("r-1"))
    result = rua("fetch", "imap")
    assert_refused(result, *fragments)
    assert SECRET not in result.stderr and "PRIVATE KEY" not in result.stderr
    assert box.subjects(box.inbox) == ["Report r-1"]
    assert box.subjects(box.done) == [] and box.subjects(box.refused) == []
    assert stored_ids() == []


def test_settings_missing_or_unreadable_are_one_line_before_any_request(
        rua, acme, box, tokens, monkeypatch, tmp_path):
    microsoft(tokens, monkeypatch, tmp_path, RUA_IMAP_OAUTH_SECRET_FILE="/nonexistent/secret")
    assert_refused(rua("fetch", "imap"), "cannot read RUA_IMAP_OAUTH_SECRET_FILE /nonexistent")
    pem, _ = token_server.app_certificate(trustme.KeyType.ECDSA)
    (tmp_path / "ec.pem").write_text(pem)
    monkeypatch.setenv("RUA_IMAP_OAUTH_CERT_FILE", str(tmp_path / "ec.pem"))
    assert_refused(rua("fetch", "imap"), "RUA_IMAP_OAUTH_CERT_FILE", "the key must be RSA")
    monkeypatch.setenv("RUA_IMAP_OAUTH_TENANT", "")
    assert_refused(rua("fetch", "imap"), "RUA_IMAP_AUTH=microsoft needs RUA_IMAP_OAUTH_TENANT")
    monkeypatch.setenv("RUA_IMAP_AUTH", "kerberos")
    assert_refused(rua("fetch", "imap"), "RUA_IMAP_AUTH must be password, microsoft or google")
    (tmp_path / "not-a-key.json").write_text('{"type": "authorized_user"}')
    google(tokens, monkeypatch, tmp_path)
    monkeypatch.setenv("RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE", str(tmp_path / "not-a-key.json"))
    assert_refused(rua("fetch", "imap"), "is not a service account's JSON key")
    assert tokens.issued == [] and tokens.introspected == []


def test_watch_renews_an_expiring_token_on_a_new_connection(acme, box, tokens, monkeypatch,
                                                            tmp_path, config):
    microsoft(tokens, monkeypatch, tmp_path)
    tokens.lifetime = 8         # rua renews it after 6 s; the server refuses it after 8
    settings = {k: v for k, v in os.environ.items() if k.startswith("RUA_IMAP")}
    with watching(config, settings) as (out, err):
        assert tokens.wait(lambda s: any(active for _, active in s.introspected)), err.lines
        box.append(report_mail("r-1"))
        assert out.wait_for("1 file: 1 report stored"), (out.lines, err.lines)
        assert tokens.wait(_logged_in_with_a_second_token), (err.lines, tokens.introspected)
        box.append(report_mail("r-2"))
        assert out.wait_for("1 file: 1 report stored", count=2), (out.lines, err.lines)
    assert any("access token is due for renewal" in line for line in err.lines), err.lines
    assert stored_ids() == ["r-1", "r-2"]
    assert box.subjects(box.done) == ["Report r-1", "Report r-2"]


def _logged_in_with_a_second_token(server) -> bool:
    if len(server.issued) < 2:
        return False
    return (server.issued[1].token, True) in server.introspected


def test_the_scheduler_job_keeps_its_token_from_one_run_to_the_next(acme, box, tokens,
                                                                    monkeypatch, tmp_path,
                                                                    config):
    microsoft(tokens, monkeypatch, tmp_path)
    config = Config.from_env(os.environ).replace(database_url=config.database_url,
                                                 lock_dir=config.lock_dir, offline=True)
    box.append(report_mail("r-1"))
    assert fetch_configured(config) == 1
    box.append(report_mail("r-2"))
    assert fetch_configured(config) == 1
    assert stored_ids() == ["r-1", "r-2"] and len(tokens.issued) == 1


@pytest.mark.parametrize("provider", ["microsoft", "microsoft-certificate", "google"])
def test_a_token_endpoint_that_echoes_the_request_never_gets_a_credential_shown_or_logged(
        rua, acme, box, tokens, monkeypatch, tmp_path, config, caplog, provider):
    if provider.startswith("microsoft"):
        microsoft(tokens, monkeypatch, tmp_path, certificate=provider.endswith("certificate"))
    else:
        google(tokens, monkeypatch, tmp_path)
    tokens.echo = True      # a wrong or hostile RUA_IMAP_OAUTH_AUTHORITY (or token URL)
    box.append(report_mail("r-1"))
    result = rua("fetch", "imap")
    assert_refused(result, "refused a token to", "***")
    config = Config.from_env(os.environ).replace(database_url=config.database_url,
                                                 lock_dir=config.lock_dir, offline=True)
    [job] = [job for name, job, _ in job_table(config) if name == "fetch"]
    with pytest.raises(JobFailed, match="refused a token to"):
        run_exclusive("fetch", job, config)
    sent = {form[name] for form in tokens.forms for name in oauth.SECRET_FIELDS if name in form}
    assert sent and (SECRET in sent) == (provider == "microsoft")
    for credential in sent:
        for text in (result.stderr, caplog.text):
            assert credential not in text and credential[-20:] not in text
    assert box.subjects(box.inbox) == ["Report r-1"] and stored_ids() == []


def test_a_certificate_near_its_end_is_said_by_check_and_warned_of_by_the_fetch_job(
        rua, acme, box, tokens, monkeypatch, tmp_path, config, caplog):
    app = microsoft(tokens, monkeypatch, tmp_path, certificate=True)
    ends = utcnow() + timedelta(days=10)
    pem, app.certificate = token_server.app_certificate(not_after=ends)
    (tmp_path / "app.pem").write_text(pem)
    said = f"the certificate in RUA_IMAP_OAUTH_CERT_FILE expires on {ends:%Y-%m-%d} (in 10 day(s))"
    checked = rua("fetch", "imap", "--check")
    assert checked.exit_code == 0, checked.stderr
    assert said in checked.stdout.splitlines()
    config = Config.from_env(os.environ).replace(database_url=config.database_url,
                                                 lock_dir=config.lock_dir, offline=True)
    box.append(report_mail("r-1"))
    assert fetch_configured(config) == 1                 # the certificate still works
    assert f"{said}: make a new one, upload it to the app (Certificates & secrets) and put it " \
           "and its key in the file" in caplog.messages
