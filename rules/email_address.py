"""What rua takes as an e-mail address when a person gives one (a member, an alert channel,
RUA_SMTP_URL's from=): email-validator's syntax rule, without a DNS look-up. Addresses stored
before are read as they are; only new input is checked."""
from __future__ import annotations

from email_validator import EmailNotValidError, validate_email


def email_address(text: str) -> str | None:
    """The address in the one form rua stores and sends to, or None when it is not one. The
    domain is kept in its ASCII (IDNA) form, which every SMTP server takes; a local part must be
    ASCII for the same reason. A name without a dot after the @ (an intranet host) is allowed;
    a reserved one such as localhost is not."""
    try:
        found = validate_email(text, check_deliverability=False, allow_smtputf8=False,
                               globally_deliverable=False)
    except EmailNotValidError:
        return None
    return found.ascii_email
