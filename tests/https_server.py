"""A real HTTPS server on 127.0.0.1 for MTA-STS policies; its certificate comes from a trustme CA.

Answers are set per (host, path); each TCP connection and each request is counted, so a test can
show that nothing connected at all."""
from __future__ import annotations

import ssl
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import trustme

POLICY_PATH = "/.well-known/mta-sts.txt"


class HTTPSServer:
    """Serves the answers it is given over TLS with a certificate for `names` until stop()."""

    def __init__(self, ca: trustme.CA, names: list[str]):
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert(*names).configure_cert(context)
        self.answers: dict[tuple[str, str], tuple[int, dict, bytes, float]] = {}
        self.requests: list[tuple[str, str]] = []
        self.connections = 0
        self._httpd = _Server(("127.0.0.1", 0), _Handler, owner=self)
        # The handshake happens in the handler's thread, so a client that rejects the
        # certificate does not hold up the accepting loop.
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True,
                                                 do_handshake_on_connect=False)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> "HTTPSServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._thread.join(timeout=5)
        self._httpd.server_close()

    def answer(self, host: str, body: bytes | str, *, status: int = 200,
               content_type: str = "text/plain", path: str = POLICY_PATH, trickle: float = 0,
               **headers) -> None:
        """Answer GET https://<host><path> with this status, content type, headers and body;
        `trickle` seconds between bytes make a server that is slow but never silent."""
        raw = body.encode() if isinstance(body, str) else body
        fields = {"Content-Type": content_type} if content_type else {}
        fields.update({k.replace("_", "-"): v for k, v in headers.items()})
        self.answers[(host.lower(), path)] = (status, fields, raw, trickle)

    def reset(self) -> None:
        self.answers.clear()
        self.requests.clear()
        self.connections = 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler, *, owner: HTTPSServer):
        self.owner = owner
        super().__init__(address, handler)

    def get_request(self):
        request = super().get_request()
        self.owner.connections += 1
        return request

    def handle_error(self, request, client_address):
        """A client that hangs up or refuses the certificate is part of the tests, not noise."""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        owner = self.server.owner
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].lower()
        owner.requests.append((host, self.path))
        status, fields, body, trickle = owner.answers.get(
            (host, self.path), (404, {"Content-Type": "text/plain"}, b"not found\n", 0))
        fields = {**fields, "Content-Length": str(len(body))}
        head = f"HTTP/1.0 {status} {HTTPStatus(status).phrase}\r\n" + "".join(
            f"{name}: {value}\r\n" for name, value in fields.items()) + "\r\n"
        if not trickle:
            self.wfile.write(head.encode() + body)
            return
        for byte in head.encode() + body:
            self.wfile.write(bytes([byte]))
            time.sleep(trickle)

    def log_message(self, format, *args):
        pass
