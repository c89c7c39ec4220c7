"""A token provider's refusal as one line a person can act on: who was refused, the provider's
code and request ids, and what to fix when the code says it. Pure: plain values in and out.
Every word of the provider's is bounded and has the credentials rua sent (`hidden`) masked."""
from __future__ import annotations

from guard.shown import scrubbed

# Entra ID's AADSTS codes for what a client-credentials app gets wrong, and the fix of each.
MICROSOFT_FIXES = {
    90002: "no such tenant: RUA_IMAP_OAUTH_TENANT must be the app's Directory (tenant) ID",
    700016: ("no such app in this tenant: check RUA_IMAP_OAUTH_CLIENT_ID (the Application "
             "(client) ID) and RUA_IMAP_OAUTH_TENANT"),
    7000215: ("the client secret is wrong or was deleted: add a new one under Certificates & "
              "secrets"),
    7000222: "the client secret has expired: add a new one under Certificates & secrets",
    700027: ("the certificate is not (or no longer) uploaded to the app: upload it under "
             "Certificates & secrets"),
    7000112: "the app is disabled in this tenant",
    500011: ("Exchange Online is not in this tenant, or RUA_IMAP_OAUTH_SCOPE names another "
             "cloud's"),
    1002012: "RUA_IMAP_OAUTH_SCOPE must end in /.default for an app's own token",
}
MICROSOFT_IMAP_FIX = ("the app has no IMAP.AccessAsApp permission (with admin consent), or the "
                      "mailbox is not granted to its service principal (Add-MailboxPermission); "
                      "docs/mailboxes.md")
GOOGLE_IMAP_FIX = ("check that IMAP is on for this user (Admin console: Apps > Google Workspace "
                   "> Gmail > End User Access); docs/mailboxes.md")


def microsoft(app, answer: dict, hidden=()) -> str:
    """One line for Entra ID's error answer to a token request (or its discovery document)."""
    description = _first_line(answer.get("error_description"), hidden)
    codes = answer.get("error_codes") or []
    code = codes[0] if codes and isinstance(codes[0], int) else None
    said = scrubbed(str(answer.get("error") or "no token in the answer"), hidden, 100)
    if description:
        said = f"{said}: {description}"
    line = f"Microsoft 365 refused a token to {app.who}: {said}{_ids(answer, hidden)}"
    fix = MICROSOFT_FIXES.get(code)
    if fix:
        line = f"{line}; {fix}"
    return line


def google(account, answer: dict, hidden=()) -> str:
    """One line for Google's error answer to the service account's token request."""
    error = scrubbed(str(answer.get("error") or "no token in the answer"), hidden)
    description = _first_line(answer.get("error_description"), hidden)
    said = f"{error}: {description}" if description else error
    line = f"Google refused a token to {account.who}: {said}"
    fix = _google_fix(account, error, description)
    if fix:
        line = f"{line}; {fix}"
    return line


def imap_refusal(user: str, where: str, who: str, server_said: str, fix: str) -> str:
    """One line for an IMAP server refusing a token the provider gave."""
    return (f"IMAP login as {user} at {where} refused the token of {who} ({server_said}): "
            f"{fix}")


def _google_fix(account, error: str, description: str) -> str:
    if error == "unauthorized_client":
        return (f"domain-wide delegation is not granted: in the Admin console (Security > "
                f"Access and data control > API controls > Domain-wide delegation) add client "
                f"ID {account.client_id} with the scope {account.scope}")
    if error == "invalid_grant" and "email or user id" in description.lower():
        return (f"no Workspace user {account.user}: the user of RUA_IMAP_URL must be the "
                f"mailbox's address")
    if error == "invalid_grant" and "signature" in description.lower():
        return ("the key of RUA_IMAP_OAUTH_SERVICE_ACCOUNT_FILE was deleted or revoked: "
                "create a new key for the service account")
    if error in ("invalid_client", "disabled_client"):
        return "the service account is deleted or disabled, or its key was revoked"
    return ""


def _ids(answer: dict, hidden) -> str:
    """Entra ID's correlation and trace ids, which its support asks for."""
    ids = [f"{label} {scrubbed(str(answer[key]), hidden, 60)}"
           for key, label in (("correlation_id", "correlation id"), ("trace_id", "trace id"))
           if answer.get(key)]
    return f" ({', '.join(ids)})" if ids else ""


def _first_line(text, hidden) -> str:
    """Entra ID appends trace and correlation lines to its description; the first says it."""
    if not text or not str(text).strip():
        return ""
    return scrubbed(str(text).strip().splitlines()[0], hidden)
