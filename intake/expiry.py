"""A login credential's end, where the provider's own file says it: the certificate of
RUA_IMAP_OAUTH_CERT_FILE (a client secret's end shows only on the app's page in Entra ID, and a
Google service account key has none)."""
from __future__ import annotations

from datetime import datetime, timedelta

# Warned this long ahead: time to make a certificate, upload it to the app and swap the file.
WARN_AHEAD = timedelta(days=30)


def certificate_end(login, now: datetime) -> str:
    """When the login's certificate ends, in words ("" for a login without one)."""
    expires = getattr(getattr(login, "account", None), "expires", None)
    if expires is None:
        return ""
    verb = "expires" if expires > now else "expired"
    return (f"the certificate in RUA_IMAP_OAUTH_CERT_FILE {verb} on {expires:%Y-%m-%d} "
            f"({_days(expires - now)})")


def warning(login, now: datetime) -> str:
    """One line when the login's certificate ends within WARN_AHEAD (or has ended), else ""."""
    expires = getattr(getattr(login, "account", None), "expires", None)
    if expires is None or expires - now > WARN_AHEAD:
        return ""
    return (f"{certificate_end(login, now)}: make a new one, upload it to the app (Certificates "
            "& secrets) and put it and its key in the file")


def _days(left: timedelta) -> str:
    days = round(left / timedelta(days=1))
    if days == 0:
        return "today"
    return f"in {days} day(s)" if days > 0 else f"{-days} day(s) ago"
