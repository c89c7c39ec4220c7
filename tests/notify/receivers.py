"""Real receivers on 127.0.0.1: a webhook endpoint that verifies Standard Webhooks signatures
with the `standardwebhooks` verifier, and an SMTP server (aiosmtpd) with STARTTLS and login."""
from __future__ import annotations

import base64
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.servers import TcpServer, free_port


class WebhookReceiver:
    """Listens on `port` (a free one when 0) between start() and stop(); stop() then start()
    is a receiver that was down and came back on the same address. `status` is what it
    answers; `hold` makes each request wait until released (a sender killed mid-request)."""

    def __init__(self, secret: str, port: int = 0):
        self.secret, self.verifier = secret, Webhook(secret)
        self.port, self.status = port, 204
        self.accepted: list[tuple[str, dict]] = []     # (webhook-id, payload) answered 2xx
        self.seen: list[str] = []                      # webhook-id of every verified request
        self.forged = 0
        self.hold = threading.Event()
        self.holding = threading.Event()
        self.hold.set()
        self._lock = threading.Lock()
        self._httpd = None

    def use_secret(self, secret: str) -> None:
        self.secret, self.verifier = secret, Webhook(secret)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/rua"

    def start(self) -> "WebhookReceiver":
        self._httpd = _Server(("127.0.0.1", self.port), _Handler)
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def received(self, body: bytes, headers) -> int:
        """The status for one request: 401 unless its signature verifies."""
        try:
            payload = self.verifier.verify(body, dict(headers.items()))
        except WebhookVerificationError:
            with self._lock:
                self.forged += 1
            return 401
        webhook_id = headers["webhook-id"]
        with self._lock:
            self.seen.append(webhook_id)
        self.holding.set()
        self.hold.wait(30)
        status = self.status
        if 200 <= status < 300:
            with self._lock:
                self.accepted.append((webhook_id, payload))
        return status


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64      # the standard library's 5 drops a drain's connections


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status = self.server.owner.received(body, self.headers)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Trickler(TcpServer):
    """A TCP server on 127.0.0.1 that answers each connection with `payload`, one byte every
    `interval` seconds, whatever it is sent: slow enough that no single read times out, so
    only a deadline on the whole attempt ends it."""

    def __init__(self, payload: bytes, interval: float):
        super().__init__()
        self.payload, self.interval = payload, interval

    def serve(self, connection: socket.socket) -> None:
        with connection:
            for byte in self.payload:
                if self._stopped.wait(self.interval):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:      # the client gave up: what a deadline is for
                    return


class MailSink:
    """aiosmtpd's handler: keeps each accepted message (envelope, parsed text)."""

    def __init__(self):
        self.messages: list[tuple[str, list[str], str]] = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos),
                              envelope.content.decode()))
        return "250 OK"


def smtp_server(ca, *, login: tuple[str, str] | None, implicit_tls: bool = False,
                echo: bool = False) -> tuple:
    """A started aiosmtpd Controller on 127.0.0.1 with a trustme certificate, and its sink.
    With `login`, AUTH is required (and, as aiosmtpd insists, only after TLS); with `echo`,
    every login is refused with a reply that says back what the client sent, in clear and in
    base64 (as a broken or hostile server might)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost", "127.0.0.1").configure_cert(context)
    sink = MailSink()

    def authenticate(server, session, envelope, mechanism, auth_data):
        if echo:
            sent = b"\0" + auth_data.login + b"\0" + auth_data.password
            return AuthResult(success=False, handled=False, message=(
                f"535 5.7.8 {mechanism} {auth_data.login.decode()} "
                f"{auth_data.password.decode()} refused ({base64.b64encode(sent).decode()})"))
        ok = login is not None and (auth_data.login.decode(), auth_data.password.decode()) == login
        return AuthResult(success=ok, handled=False)   # aiosmtpd answers 235 or 535
    options = {"authenticator": authenticate, "auth_required": login is not None}
    if implicit_tls:
        # aiosmtpd only counts STARTTLS as TLS for AUTH (and warns when AUTH is required
        # without it); here the whole connection is TLS, and a login is checked all the same.
        options.update(ssl_context=context, auth_require_tls=False, auth_required=False)
    else:
        options.update(tls_context=context, require_starttls=True)
    controller = Controller(sink, hostname="127.0.0.1", port=free_port(), **options)
    controller.start()
    return controller, sink
