"""An IMAP server over TLS on 127.0.0.1 that refuses every LOGIN by saying it back: the user,
the password in clear and in base64, as a tagged NO or as a BYE that ends the connection."""
from __future__ import annotations

import base64
import socket
import ssl

import trustme

from tests.servers import TcpServer

CAPABILITY = "CAPABILITY IMAP4rev1 AUTH=PLAIN"


class EchoingImap(TcpServer):
    """Listens between start() and stop(); `bye` answers with BYE instead of NO."""

    def __init__(self, ca: trustme.CA, *, bye: bool = False):
        super().__init__()
        self.bye = bye
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(self.context)

    def serve(self, connection: socket.socket) -> None:
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
