"""A provider's refusal as one line, from plain answers: who, the code, the ids, the fix."""
from intake import provider_errors
from intake.oauth_settings import GoogleAccount, MicrosoftApp

APP = MicrosoftApp(tenant="contoso-id", client_id="app-id", user="dmarc@contoso.example",
                   authority="https://login.microsoftonline.com",
                   scope="https://outlook.office365.com/.default", secret="hunter2")
ACCOUNT = GoogleAccount(email="reader@project.iam.gserviceaccount.com", client_id="1234",
                        user="dmarc@example.com", token_url="https://oauth2.googleapis.com/token",
                        scope="https://mail.google.com/", private_key="-----BEGIN secret")


def test_an_entra_error_names_the_app_the_code_the_ids_and_the_fix():
    line = provider_errors.microsoft(APP, {
        "error": "invalid_client",
        "error_description": "AADSTS7000222: The provided client secret keys for app 'app-id' "
                             "are expired.\r\nTrace ID: t-1\r\nCorrelation ID: c-1\r\n",
        "error_codes": [7000222], "trace_id": "t-1", "correlation_id": "c-1"})
    assert line == ("Microsoft 365 refused a token to app app-id in tenant contoso-id for "
                    "mailbox dmarc@contoso.example: invalid_client: AADSTS7000222: The provided "
                    "client secret keys for app 'app-id' are expired. (correlation id c-1, "
                    "trace id t-1); the client secret has expired: add a new one under "
                    "Certificates & secrets")
    assert "\n" not in line and "hunter2" not in line


def test_an_unknown_entra_code_still_gives_what_the_provider_said():
    line = provider_errors.microsoft(APP, {"error": "temporarily_unavailable",
                                           "error_codes": [1234567]})
    assert line.endswith("for mailbox dmarc@contoso.example: temporarily_unavailable")
    assert provider_errors.microsoft(APP, {}).endswith(": no token in the answer")


def test_google_errors_say_what_to_grant_or_fix():
    undelegated = provider_errors.google(ACCOUNT, {
        "error": "unauthorized_client",
        "error_description": "Client is unauthorized to retrieve access tokens using this "
                             "method, or client not authorized for any of the scopes requested."})
    assert undelegated.startswith("Google refused a token to service account "
                                  "reader@project.iam.gserviceaccount.com (client 1234) for "
                                  "mailbox dmarc@example.com: unauthorized_client: Client is")
    assert "add client ID 1234 with the scope https://mail.google.com/" in undelegated
    unknown_user = provider_errors.google(ACCOUNT, {"error": "invalid_grant",
                                                    "error_description": "Invalid email or "
                                                                         "User ID"})
    assert unknown_user.endswith("; no Workspace user dmarc@example.com: the user of "
                                 "RUA_IMAP_URL must be the mailbox's address")
    assert provider_errors.google(ACCOUNT, {"error": "server_error"}).endswith(": server_error")
    assert "BEGIN" not in undelegated + unknown_user


def test_an_imap_refusal_names_the_server_and_the_fix():
    line = provider_errors.imap_refusal("dmarc@contoso.example", "outlook.office365.com:993",
                                        APP.who, "AUTHENTICATE failed.",
                                        provider_errors.MICROSOFT_IMAP_FIX)
    assert line.startswith("IMAP login as dmarc@contoso.example at outlook.office365.com:993 "
                           "refused the token of app app-id in tenant contoso-id")
    assert "IMAP.AccessAsApp" in line and "Add-MailboxPermission" in line


def test_what_a_provider_echoes_of_the_credentials_sent_is_masked_and_bounded():
    assertion = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhcHAifQ.c2lnbmF0dXJl"
    line = provider_errors.microsoft(APP, {
        "error": f"invalid_request client_secret=hunter2&client_assertion={assertion}",
        "error_description": "AADSTS900144: you sent " + "x" * 400 + " hunter2",
        "error_codes": [900144], "trace_id": assertion, "correlation_id": "c-1"},
        {"hunter2", assertion})
    assert "hunter2" not in line and "c2lnbmF0dXJl" not in line
    assert "invalid_request client_secret=***&client_assertion=***" in line
    assert "(correlation id c-1, trace id ***)" in line and len(line) < 900
    google = provider_errors.google(ACCOUNT, {"error": "invalid_grant",
                                              "error_description": f"bad {assertion}"},
                                    {assertion})
    assert google.endswith("invalid_grant: bad ***")

