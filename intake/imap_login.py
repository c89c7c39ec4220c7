"""How rua logs in to the IMAP server: a password, or an OAuth 2.0 token over SASL.

A login is made once from the settings (files read, nothing sent) and used for every connection,
so `rua fetch imap --watch` keeps one token until it is due for renewal.
"""
from __future__ import annotations

from imapclient import IMAPClient

from guard.shown import scrubbed
from intake import oauth, oauth_settings, provider_errors, sasl
from intake.mailbox_url import IntakeError, Mailbox, password


class PasswordLogin:
    """LOGIN with RUA_IMAP_PASSWORD(_FILE): nothing to prepare, nothing to renew."""

    def __init__(self, user: str, secret: str):
        self.user = user
        self._secret = secret

    def prepare(self) -> None:
        """Nothing to obtain before connecting."""

    def log_in(self, client: IMAPClient) -> None:
        client.login(self.user, self._secret)

    def said(self, text: str) -> str:
        """The server's words, bounded, the password masked should the server echo it."""
        return scrubbed(text, [self._secret])

    def refusal(self, where: str, reason: str) -> str:
        return f"IMAP login as {self.user} at {where} refused: {self.said(reason)}"

    def renew_in(self) -> float | None:
        """A password is never renewed."""
        return None


class TokenLogin:
    """AUTHENTICATE XOAUTH2 (or OAUTHBEARER) with a token from Microsoft 365 or Google."""

    def __init__(self, user: str, account: oauth_settings.MicrosoftApp | oauth_settings.GoogleAccount):
        self.user = user
        self.account = account
        self.tokens = oauth.tokens_for(account)
        self._token = ""
        self._exchange: sasl.Exchange | None = None

    def prepare(self) -> None:
        """Obtain (or renew) the token before any connection: a TokenError says why not."""
        self._token = self.tokens.current()

    def log_in(self, client: IMAPClient) -> None:
        mechanism = sasl.choose(client.capabilities())
        if mechanism is None:
            raise IntakeError(f"the IMAP server offers neither AUTH=XOAUTH2 nor "
                              f"AUTH=OAUTHBEARER, so it takes no OAuth token for {self.user}")
        self._exchange = sasl.Exchange(mechanism, self.user, self._token)
        client.sasl_login(mechanism, self._exchange)

    def said(self, text: str) -> str:
        """The server's words, bounded, the token masked should the server echo it."""
        return scrubbed(text, [self._token])

    def refusal(self, where: str, reason: str) -> str:
        said = reason
        if self._exchange is not None and self._exchange.error:
            said = f"{reason}; {self._exchange.error}"
        said = self.said(said)
        if isinstance(self.account, oauth_settings.MicrosoftApp):
            fix = provider_errors.MICROSOFT_IMAP_FIX
        else:
            fix = provider_errors.GOOGLE_IMAP_FIX
        return provider_errors.imap_refusal(self.user, where, self.account.who, said, fix)

    def renew_in(self) -> float | None:
        """Seconds until the token is due for renewal: the connection is renewed with it."""
        return self.tokens.renew_in()


def for_config(config, mailbox: Mailbox) -> PasswordLogin | TokenLogin:
    """The login RUA_IMAP_AUTH names, its secrets read now (an IntakeError when one is amiss)."""
    if config.imap_auth == "password":
        return PasswordLogin(mailbox.user, password(config))
    return TokenLogin(mailbox.user, oauth_settings.settings(config, mailbox.user))
