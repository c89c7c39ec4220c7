"""mailto: report addresses (RFC 6068), as DMARC's and TLS-RPT's rua= tags give them."""
from __future__ import annotations

from urllib.parse import unquote

SCHEME = "mailto:"


def host(uri: str) -> str | None:
    """The mail host of a mailto: URI that names one address (lower case, no final dot);
    None for another scheme or an address without a local part or a dotted host."""
    if not uri.lower().startswith(SCHEME):
        return None
    address = uri[len(SCHEME):]
    if address.startswith("//"):
        return None           # mailto://... is a URL with an authority, not an address
    local, at, name = unquote(address).rpartition("@")
    name = name.strip().lower().rstrip(".")
    if not (at and local and "." in name) or " " in name:
        return None
    return name
