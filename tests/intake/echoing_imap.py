"""An IMAP server over TLS on 127.0.0.1 that refuses every LOGIN by saying it back: the user,
the password in clear and in base64, as a tagged NO or as a BYE that ends the connection."""
from __future__ import annotations

import base64
import socket
import ssl
import threading

import trustme

CAPABILITY = "CAPABILITY IMAP4rev1 AUTH=PLAIN"


class EchoingImap:
    """Listens between start() and stop(); `bye` answers with BYE instead of NO."""

    def __init__(self, ca: trustme.CA, *, bye: bool = False):
        self.bye = bye
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(self.context)
        self._sock = socket.socket()
        self._stopped = threading.Event()

    @property
    def port(self) -> int:
        return self._sock.getsockname()[1]

    def start(self) -> "EchoingImap":
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._sock.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            with self.context.wrap_socket(connection, server_side=True) as tls:
                stream = tls.makefile("rwb")
                stream.write(f"* OK [{CAPABILITY}] echo ready\r\n".encode())
                stream.flush()
                for line in stream:
                    tag, command, *rest = line.decode().rstrip("\r\n").split(" ", 2)
                    if command.upper() == "LOGIN":
                        stream.write(self._refusal(tag, rest[0]).encode())
                    elif command.upper() == "CAPABILITY":
                        stream.write(f"* {CAPABILITY}\r\n{tag} OK done\r\n".encode())
                    else:
                        stream.write(f"{tag} BAD not here\r\n".encode())
                    stream.flush()
                    if self.bye and command.upper() == "LOGIN":
                        return
        except (OSError, ValueError):
            return

    def _refusal(self, tag: str, arguments: str) -> str:
        said = f"LOGIN {arguments} ({base64.b64encode(arguments.encode()).decode()})"
        if self.bye:
            return f"* BYE {said} is not welcome\r\n"
        return f"{tag} NO [AUTHENTICATIONFAILED] {said} refused\r\n"
