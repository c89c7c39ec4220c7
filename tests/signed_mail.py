"""Report mail signed by the tests (dkimpy signs) with keys the tests' DNS server publishes."""
from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import timezone
from email.utils import format_datetime

import dkim
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from store.clock import utcnow


@dataclass(frozen=True)
class Key:
    """A signing key: its selector, domain, private key (as dkimpy takes it) and DNS record."""
    selector: str
    domain: str
    private: bytes
    record: str
    algorithm: bytes

    def zone_line(self) -> str:
        """The key's TXT record, relative to its domain's zone (strings of at most 255)."""
        chunks = " ".join(f'"{self.record[i:i + 255]}"' for i in range(0, len(self.record), 255))
        return f"{self.selector}._domainkey IN TXT {chunks}\n"


def rsa_key(domain: str, selector: str = "s1", bits: int = 2048) -> Key:
    private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    pem = private.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    der = private.public_key().public_bytes(serialization.Encoding.DER,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
    record = f"v=DKIM1; k=rsa; p={base64.b64encode(der).decode()}"
    return Key(selector, domain, pem, record, b"rsa-sha256")


def ed25519_key(domain: str, selector: str = "ed") -> Key:
    private = ed25519.Ed25519PrivateKey.generate()
    seed = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption())
    public = private.public_key().public_bytes(serialization.Encoding.Raw,
                                               serialization.PublicFormat.Raw)
    record = f"v=DKIM1; k=ed25519; p={base64.b64encode(public).decode()}"
    return Key(selector, domain, base64.b64encode(seed), record, b"ed25519-sha256")


def report_message(sender: str = "noreply-dmarc-support@google.com", *, date=None,
                   attachment: bytes = b"", subject: str = "Report domain: example.com",
                   content_type: str = "application/xml", name: str = "report.xml") -> bytes:
    """A report message as reporters send it: a From, a Date, one base64 attachment."""
    sent = format_datetime((date or utcnow()).replace(tzinfo=timezone.utc), usegmt=True)
    body = base64.encodebytes(attachment or b"<feedback></feedback>\n").replace(b"\n", b"\r\n")
    return (f"From: {sender}\r\nTo: dmarc@example.com\r\nSubject: {subject}\r\n"
            f"Date: {sent}\r\nMessage-ID: <1@test>\r\nMIME-Version: 1.0\r\n"
            f"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n"
            f"--b1\r\nContent-Type: {content_type}; name=\"{name}\"\r\n"
            f"Content-Transfer-Encoding: base64\r\n\r\n").encode() + body + b"--b1--\r\n"


HEADERS = [b"from", b"to", b"subject", b"date", b"message-id", b"content-type"]


def signed(message: bytes, key: Key, *, canonicalize=(b"relaxed", b"relaxed"), length=False,
           expires: int | None = None) -> bytes:
    """message with key's DKIM-Signature on top (over From, To, Subject, Date and more);
    expires: the signature's x= (and a t= an hour before it)."""
    signer = dkim.DKIM(message, signature_algorithm=key.algorithm) if expires is None else \
        _Expiring(message, signature_algorithm=key.algorithm, expires=expires)
    return signer.sign(key.selector.encode(), key.domain.encode(), key.private,
                       canonicalize=canonicalize, length=length,
                       include_headers=HEADERS) + message


class _Expiring(dkim.DKIM):
    """dkimpy signs with no x= tag: this signer puts one (and a t= before it) in the tags it
    signs, so the signature is valid but for its expiry."""

    def __init__(self, message, *, expires: int, **options):
        super().__init__(message, **options)
        self.expires = expires

    def gen_header(self, fields, *args, **options):
        times = [(b"t", str(self.expires - 3600).encode()), (b"x", str(self.expires).encode())]
        fields = [f for f in fields if f[0] != b"t"]
        at = [name for name, _ in fields].index(b"bh")
        return super().gen_header(fields[:at] + times + fields[at:], *args, **options)
