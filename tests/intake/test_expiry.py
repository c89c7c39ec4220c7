"""A certificate's end said with plain values: when it is known, and when to warn of it."""
from datetime import datetime, timedelta

import pytest

from intake import expiry, imap_login, oauth_settings

NOW = datetime(2026, 3, 31, 12, 0, 0)


def login_with_certificate_ending(expires) -> imap_login.TokenLogin:
    app = oauth_settings.MicrosoftApp("t", "c", "dmarc", "https://login.example", "s",
                                      private_key="k", thumbprint="ab", expires=expires)
    return imap_login.TokenLogin("dmarc", app)


@pytest.mark.parametrize("left, said", [
    (timedelta(days=400), "expires on 2027-05-05 (in 400 day(s))"),
    (timedelta(hours=3), "expires on 2026-03-31 (today)"),
    (-timedelta(days=2), "expired on 2026-03-29 (2 day(s) ago)"),
])
def test_the_end_is_said_in_days(left, said):
    assert expiry.certificate_end(login_with_certificate_ending(NOW + left), NOW) == \
        f"the certificate in RUA_IMAP_OAUTH_CERT_FILE {said}"


@pytest.mark.parametrize("left, warned", [(timedelta(days=31), False), (timedelta(days=30), True),
                                          (-timedelta(days=1), True)])
def test_a_warning_comes_in_the_last_30_days_and_after(left, warned):
    assert bool(expiry.warning(login_with_certificate_ending(NOW + left), NOW)) is warned


def test_a_password_or_a_secret_has_no_known_end():
    assert expiry.certificate_end(imap_login.PasswordLogin("dmarc", "pw"), NOW) == ""
    assert expiry.warning(login_with_certificate_ending(None), NOW) == ""
