"""An OAuth 2.0 token endpoint and introspection endpoint over HTTPS for the IMAP OAuth tests.

It plays Entra ID (tenant discovery, the client-credentials grant of RFC 6749 section 4.4 with a
secret or a certificate's JWT assertion) and Google (a service account's JWT-bearer grant, RFC
7523), so msal and google-auth run their real code against it, and it answers Dovecot's token
introspection (RFC 7662) for the tokens it issued. Each grant and introspection is recorded under
a condition the tests wait on.
"""
from __future__ import annotations

import base64
import json
import os
import secrets
import ssl
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import trustme
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
EXCHANGE_SCOPE = "https://outlook.office365.com/.default"
GMAIL_SCOPE = "https://mail.google.com/"
GOOGLE_TOKEN_PATH = "/google/token"
# The audience Google wants in an assertion, wherever the token endpoint is reached.
GOOGLE_AUDIENCE = "https://oauth2.googleapis.com/token"
WAIT_SECONDS = 30


@dataclass
class App:
    """An Entra app registration: its secret or certificate, and what it was granted."""
    tenant: str
    client_id: str
    secret: str = ""
    certificate: x509.Certificate | None = None
    mailboxes: tuple[str, ...] = ()       # IMAP.AccessAsApp and the mailbox permission


@dataclass
class ServiceAccount:
    """A Google service account: its public key, and the scopes delegated to its client."""
    email: str
    client_id: str
    key_id: str
    public_key: rsa.RSAPublicKey
    delegated: tuple[str, ...] = (GMAIL_SCOPE,)


@dataclass
class Issued:
    token: str
    client: str
    mailboxes: tuple[str, ...]
    expires_at: float           # time.monotonic()


@dataclass
class TokenServer:
    """The registry of apps, service accounts and users, and every token handed out."""
    ca: trustme.CA
    lifetime: int = 3600
    apps: dict[tuple[str, str], App] = field(default_factory=dict)
    accounts: dict[str, ServiceAccount] = field(default_factory=dict)
    users: set[str] = field(default_factory=set)
    issued: list[Issued] = field(default_factory=list)
    introspected: list[tuple[str, bool]] = field(default_factory=list)
    forms: list[dict] = field(default_factory=list)    # every token request's form, in order
    echo: bool = False          # refuse every token request, echoing it back (a hostile authority)
    changed: threading.Condition = field(default_factory=threading.Condition)
    port: int = 0
    ca_file: str = ""           # the CA's PEM, for REQUESTS_CA_BUNDLE

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def google_token_url(self) -> str:
        return self.base + GOOGLE_TOKEN_PATH

    @property
    def introspection_url(self) -> str:
        return self.base + "/introspect"

    def tenants(self) -> set[str]:
        return {tenant for tenant, _ in self.apps}

    def wait(self, predicate, timeout: float = WAIT_SECONDS) -> bool:
        """Until predicate(self) holds (True) or the timeout passes (False)."""
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self), timeout)

    def reset(self) -> None:
        with self.changed:
            self.apps.clear()
            self.accounts.clear()
            self.users.clear()
            self.issued.clear()
            self.introspected.clear()
            self.forms.clear()
            self.echo = False
            self.lifetime = 3600

    def issue(self, client: str, mailboxes: tuple[str, ...]) -> dict:
        token = secrets.token_urlsafe(32)
        with self.changed:
            self.issued.append(Issued(token, client, mailboxes, time.monotonic() + self.lifetime))
            self.changed.notify_all()
        return {"token_type": "Bearer", "expires_in": self.lifetime,
                "ext_expires_in": self.lifetime, "access_token": token}

    def introspect(self, token: str) -> dict:
        found = next((i for i in self.issued if i.token == token), None)
        active = bool(found and found.mailboxes and time.monotonic() < found.expires_at)
        with self.changed:
            self.introspected.append((token, active))
            self.changed.notify_all()
        if not active:
            return {"active": False}
        return {"active": True, "username": found.mailboxes[0], "client_id": found.client}


def app_certificate(key_type=trustme.KeyType.RSA, not_after=None
                    ) -> tuple[str, x509.Certificate]:
    """A certificate and its key as one PEM (what RUA_IMAP_OAUTH_CERT_FILE holds)."""
    leaf = trustme.CA().issue_cert("rua-app.example", key_type=key_type, not_after=not_after)
    pem = leaf.private_key_and_cert_chain_pem.bytes().decode()
    return pem, x509.load_pem_x509_certificate(leaf.cert_chain_pems[0].bytes())


def service_account_key(server: TokenServer, email: str, *, delegated=(GMAIL_SCOPE,)) -> dict:
    """A new service account registered with the server; returns its JSON key file's content."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_id, client_id = uuid.uuid4().hex, str(100000000000000000000 + len(server.accounts))
    server.accounts[email] = ServiceAccount(email, client_id, key_id, key.public_key(),
                                            tuple(delegated))
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    return {"type": "service_account", "project_id": "rua-tests", "private_key_id": key_id,
            "private_key": pem, "client_email": email, "client_id": client_id,
            "token_uri": "https://oauth2.googleapis.com/token"}


def start(ca: trustme.CA) -> tuple[TokenServer, ThreadingHTTPServer]:
    """The server listening on a free port of 127.0.0.1 with a certificate from `ca`."""
    handle, ca_file = tempfile.mkstemp(prefix="rua-token-ca-", suffix=".pem")
    os.close(handle)
    ca.cert_pem.write_to_path(ca_file)
    server = TokenServer(ca, ca_file=ca_file)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    httpd.owner = server
    server.port = httpd.server_address[1]
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return server, httpd


def stop(server: TokenServer, httpd: ThreadingHTTPServer) -> None:
    httpd.shutdown()
    httpd.server_close()
    os.unlink(server.ca_file)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def server_state(self) -> TokenServer:
        return self.server.owner

    def do_GET(self):
        parts = urlsplit(self.path).path.strip("/").split("/")
        if parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            self._discovery(parts[0])
        else:
            self._send(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        form = {k: v[0] for k, v in parse_qs(body).items()}
        parts = urlsplit(self.path).path.strip("/").split("/")
        if self.path != "/introspect":
            with self.server_state.changed:
                self.server_state.forms.append(form)
        if self.path != "/introspect" and self.server_state.echo:
            self._echo(body, form)
        elif self.path == GOOGLE_TOKEN_PATH:
            self._google(form)
        elif self.path == "/introspect":
            self._send(200, self.server_state.introspect(form.get("token", "")))
        elif parts[1:] == ["oauth2", "v2.0", "token"]:
            self._microsoft(parts[0], form)
        else:
            self._send(404, {"error": "not_found"})

    def _discovery(self, tenant: str):
        state = self.server_state
        if tenant not in state.tenants():
            self._entra_error(400, "invalid_tenant", 90002,
                              f"Tenant '{tenant}' not found. Check to make sure you have the "
                              f"correct tenant ID and are signing into the correct cloud.")
            return
        root = f"{state.base}/{tenant}"
        self._send(200, {"token_endpoint": f"{root}/oauth2/v2.0/token",
                         "authorization_endpoint": f"{root}/oauth2/v2.0/authorize",
                         "issuer": f"{root}/v2.0", "jwks_uri": f"{root}/discovery/v2.0/keys",
                         "token_endpoint_auth_methods_supported": [
                             "client_secret_post", "private_key_jwt"]})

    def _microsoft(self, tenant: str, form: dict):
        state = self.server_state
        client_id = form.get("client_id", "")
        app = state.apps.get((tenant, client_id))
        if form.get("grant_type") != "client_credentials":
            self._entra_error(400, "unsupported_grant_type", 70003, "unsupported grant type")
        elif tenant not in state.tenants():
            self._entra_error(400, "invalid_tenant", 90002, f"Tenant '{tenant}' not found.")
        elif app is None:
            self._entra_error(400, "unauthorized_client", 700016,
                              f"Application with identifier '{client_id}' was not found in "
                              f"the directory '{tenant}'.")
        elif form.get("scope") != EXCHANGE_SCOPE:
            self._entra_error(400, "invalid_scope", 1002012,
                              f"The provided value for scope {form.get('scope')} is not valid.")
        elif "client_assertion" in form:
            audience = f"{state.base}/{tenant}/oauth2/v2.0/token"
            if _assertion_ok(form, app, audience):
                self._send(200, state.issue(client_id, app.mailboxes))
            else:
                self._entra_error(401, "invalid_client", 700027,
                                  "Client assertion failed signature validation.")
        elif not app.secret or form.get("client_secret") != app.secret:
            self._entra_error(401, "invalid_client", 7000215,
                              f"Invalid client secret provided. Ensure the secret being sent "
                              f"in the request is the client secret value, not the client "
                              f"secret ID, for a secret added to app '{client_id}'.")
        else:
            self._send(200, state.issue(client_id, app.mailboxes))

    def _google(self, form: dict):
        state = self.server_state
        if form.get("grant_type") != JWT_BEARER:
            self._send(400, {"error": "unsupported_grant_type",
                             "error_description": "Invalid grant_type."})
            return
        header, claims = _jwt_parts(form.get("assertion", ""))
        account = state.accounts.get(claims.get("iss", ""))
        if not _account_signed(form.get("assertion", ""), header, claims, account):
            self._send(400, {"error": "invalid_grant",
                             "error_description": "Invalid JWT Signature."})
        elif claims.get("scope") not in account.delegated:
            self._send(401, {"error": "unauthorized_client", "error_description":
                             "Client is unauthorized to retrieve access tokens using this "
                             "method, or client not authorized for any of the scopes "
                             "requested."})
        elif claims.get("sub") not in state.users:
            self._send(400, {"error": "invalid_grant",
                             "error_description": "Invalid email or User ID"})
        else:
            self._send(200, state.issue(account.client_id, (claims["sub"],)))

    def _echo(self, body: str, form: dict):
        """A refusal that says back everything it was sent: the body as sent, its form as JSON,
        both in base64, and the Authorization header, as a hostile or broken endpoint might."""
        raw = base64.b64encode(body.encode()).decode()
        basic = base64.b64encode(f"{form.get('client_id')}:{form.get('client_secret')}".encode())
        self._send(400, {
            "error": f"invalid_request {body}",
            "error_description": (f"AADSTS900144: You sent {body} as {json.dumps(form)} "
                                  f"({raw}, Basic {basic.decode()}, "
                                  f"{self.headers.get('Authorization')})"),
            "error_codes": [900144], "trace_id": form.get("client_secret") or body,
            "correlation_id": form.get("assertion") or body})

    def _entra_error(self, status: int, error: str, code: int, text: str):
        trace, correlation = str(uuid.uuid4()), str(uuid.uuid4())
        self._send(status, {
            "error": error,
            "error_description": (f"AADSTS{code}: {text}\r\nTrace ID: {trace}\r\nCorrelation ID: "
                                  f"{correlation}\r\nTimestamp: 2026-11-26 12:00:00Z"),
            "error_codes": [code], "timestamp": "2026-11-26 12:00:00Z", "trace_id": trace,
            "correlation_id": correlation,
            "error_uri": f"{self.server_state.base}/error?code={code}"})

    def _send(self, status: int, document: dict):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _assertion_ok(form: dict, app: App, audience: str) -> bool:
    """A client assertion signed by the app's certificate's key, for this token endpoint."""
    if form.get("client_assertion_type") != CLIENT_ASSERTION or app.certificate is None:
        return False
    header, claims = _jwt_parts(form["client_assertion"])
    thumbprint = _b64(app.certificate.fingerprint(hashes.SHA1()))
    return (str(header.get("x5t")).rstrip("=") == thumbprint and claims.get("aud") == audience
            and claims.get("iss") == app.client_id == claims.get("sub")
            and claims.get("exp", 0) > time.time()
            and _signed_by(form["client_assertion"], app.certificate.public_key()))


def _account_signed(assertion: str, header: dict, claims: dict, account) -> bool:
    """An assertion signed by the service account's current key, for Google's token endpoint."""
    if account is None or header.get("kid") != account.key_id:
        return False
    return claims.get("aud") == GOOGLE_AUDIENCE and _signed_by(assertion, account.public_key)


def _jwt_parts(token: str) -> tuple[dict, dict]:
    try:
        head, body, _ = token.split(".")
        return json.loads(_unb64(head)), json.loads(_unb64(body))
    except ValueError:
        return {}, {}


def _signed_by(token: str, public_key) -> bool:
    head, body, signature = token.split(".")
    alg = json.loads(_unb64(head)).get("alg")
    if alg == "RS256":
        scheme = padding.PKCS1v15()
    elif alg == "PS256":
        scheme = padding.PSS(mgf=padding.MGF1(hashes.SHA256()),
                             salt_length=padding.PSS.DIGEST_LENGTH)
    else:
        return False
    try:
        public_key.verify(_unb64(signature), f"{head}.{body}".encode(), scheme, hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
