"""RUA_IMAP_AUTH and RUA_IMAP_OAUTH_* read into an app or a service account, or one line."""
import json

import pytest
from cryptography.hazmat.primitives import hashes

from config import Config
from intake import oauth_settings
from intake.mailbox_url import IntakeError
from tests.intake import token_server


def microsoft_config(**settings) -> Config:
    return Config(imap_auth="microsoft", imap_oauth_tenant="t-id", imap_oauth_client_id="c-id",
                  **settings)


def test_microsoft_settings_read_the_secret_from_its_file_and_never_show_it(tmp_path):
    (tmp_path / "secret").write_text("s3cret-value\n")
    app = oauth_settings.settings(microsoft_config(imap_oauth_secret_file=str(tmp_path / "secret"),
                                          imap_oauth_client_secret="ignored"), "dmarc")
    assert app.secret == "s3cret-value" and app.authority == oauth_settings.MICROSOFT_AUTHORITY
    assert app.scope == "https://outlook.office365.com/.default"
    assert "s3cret" not in repr(app)
    us_cloud = microsoft_config(imap_oauth_client_secret="x",
                                imap_oauth_authority="https://login.microsoftonline.us/",
                                imap_oauth_scope="https://outlook.office365.us/.default")
    national = oauth_settings.settings(us_cloud, "dmarc")
    assert national.authority == "https://login.microsoftonline.us"
    assert national.scope == "https://outlook.office365.us/.default"


def test_a_certificate_file_gives_the_key_and_the_sha1_thumbprint(tmp_path):
    pem, certificate = token_server.app_certificate()
    (tmp_path / "app.pem").write_text(pem)
    app = oauth_settings.settings(microsoft_config(imap_oauth_cert_file=str(tmp_path / "app.pem")), "d")
    assert app.thumbprint == certificate.fingerprint(hashes.SHA1()).hex()
    assert app.expires == certificate.not_valid_after_utc.replace(tzinfo=None)
    assert "PRIVATE KEY" in app.private_key and "PRIVATE" not in repr(app)


@pytest.mark.parametrize("settings, fragment", [
    ({"imap_auth": "kerberos"}, "RUA_IMAP_AUTH must be password, microsoft or google"),
    ({"imap_auth": "microsoft"}, "needs RUA_IMAP_OAUTH_TENANT and RUA_IMAP_OAUTH_CLIENT_ID"),
    ({"imap_auth": "microsoft", "imap_oauth_tenant": "t"}, "needs RUA_IMAP_OAUTH_CLIENT_ID"),
    ({"imap_auth": "microsoft", "imap_oauth_tenant": "t", "imap_oauth_client_id": "c"},
     "needs a client secret"),
    ({"imap_auth": "microsoft", "imap_oauth_tenant": "t", "imap_oauth_client_id": "c",
      "imap_oauth_cert_file": "{tmp}/plain.txt"}, "holds no PEM certificate"),
    ({"imap_auth": "microsoft", "imap_oauth_tenant": "t", "imap_oauth_client_id": "c",
      "imap_oauth_client_secret": "s", "imap_oauth_authority": "http://login.example"},
     "RUA_IMAP_OAUTH_AUTHORITY must be an https:// URL"),
    ({"imap_auth": "google"}, "needs RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE"),
    ({"imap_auth": "google", "imap_oauth_service_account_file": "{tmp}/plain.txt"},
     "is not a service account's JSON key"),
    ({"imap_auth": "google", "imap_oauth_service_account_file": "{tmp}/bad-key.json"},
     "its private_key is not a readable PEM key"),
    ({"imap_auth": "google", "imap_oauth_service_account_file": "{tmp}/missing.json"},
     "cannot read RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE"),
])
def test_missing_or_unreadable_settings_are_one_line(tmp_path, settings, fragment):
    (tmp_path / "plain.txt").write_text("not a key\n")
    (tmp_path / "bad-key.json").write_text(json.dumps({
        "type": "service_account", "client_email": "a@b", "client_id": "1",
        "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        "token_uri": "https://oauth2.googleapis.com/token"}))
    values = {name: value.format(tmp=tmp_path) for name, value in settings.items()}
    with pytest.raises(IntakeError, match=fragment) as caught:
        oauth_settings.settings(Config(**values), "dmarc")
    assert "\n" not in str(caught.value) and "AAAA" not in str(caught.value)
