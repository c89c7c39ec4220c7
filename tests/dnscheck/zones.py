"""Zone text for the check's tests and bench: a domain with every record right, and its parts."""
from __future__ import annotations

import base64
import functools

REPORT_ADDRESS = "dmarc@reports.rua.test"
# The report host authorizes reports for any domain (RFC 7489 7.1), by a wildcard.
REPORT_ZONE = ("rua.test", '*._report._dmarc.reports IN TXT "v=DMARC1"\n')


@functools.lru_cache(maxsize=None)
def dkim_key(bits: int = 2048) -> str:
    """The p= value of a fresh RSA public key of `bits` (SubjectPublicKeyInfo, base64)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    public = rsa.generate_private_key(public_exponent=65537, key_size=bits).public_key()
    der = public.public_bytes(serialization.Encoding.DER,
                              serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode()


def txt(text: str) -> str:
    """A TXT rdata of any length: strings of at most 255 characters, quoted."""
    return " ".join(f'"{text[i:i + 255]}"' for i in range(0, len(text), 255))


def record_lines(*, dmarc: str | None = f"v=DMARC1; p=reject; rua=mailto:{REPORT_ADDRESS}",
                 spf: str | None = "v=spf1 ip4:192.0.2.0/24 -all",
                 dkim_bits: int | None = 2048, selector: str = "s1",
                 tls_rpt: str | None = f"v=TLSRPTv1; rua=mailto:{REPORT_ADDRESS}",
                 extra: str = "") -> str:
    """Zone lines (relative names) of a domain; None leaves that record out."""
    lines = ["@ IN MX 10 mx", "mx IN A 192.0.2.25"]
    if dmarc is not None:
        lines.append(f"_dmarc IN TXT {txt(dmarc)}")
    if spf is not None:
        lines.append(f"@ IN TXT {txt(spf)}")
    if dkim_bits is not None:
        key = txt("v=DKIM1; k=rsa; p=" + dkim_key(dkim_bits))
        lines.append(f"{selector}._domainkey IN TXT {key}")
    if tls_rpt is not None:
        lines.append(f"_smtp._tls IN TXT {txt(tls_rpt)}")
    return "\n".join(lines) + "\n" + extra


def serve(server, domain: str, **records) -> None:
    """Serve `domain` (as its own zone) with record_lines(**records), and the report host."""
    server.zone(*REPORT_ZONE)
    server.zone(domain, record_lines(**records))
