"""The webhook URL rule, checked when a channel is added and again before every send.

A URL must be `https`, or `http` to a loopback address (a receiver on this host, so only in a
lab). Every address its host resolves to must pass the outbound rule (guard/addresses.py):
public unicast only, unless RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE is on, so whoever adds a channel
cannot point the service at the network it runs in. The send connects to an address that was
checked (guard/connect.py), so a name answering differently a moment later (DNS rebinding)
cannot get around the rule. Names are resolved by the system's resolver (/etc/hosts included:
RUA_DNS_NAMESERVERS is for the DNS check only); with RUA_OFFLINE, not at all.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from guard.addresses import allowed, carried_ipv4
from guard.connect import Unreachable, resolve

MAX_URL = 2048      # NotifyChannel.target's size


class RefusedUrl(ValueError):
    """The URL breaks the rule; the message says which part and why."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str                    # with its query
    addresses: tuple[str, ...]   # the checked addresses the send connects to


def judge(url: str, addresses: list[str], *, allow_private: bool) -> Target:
    """The target of `url` whose host resolved to `addresses`, or RefusedUrl."""
    scheme, host, port, path = split(url)
    if not addresses:
        raise RefusedUrl(f"{host} does not resolve to any address")
    if scheme == "http" and not all(_loopback(a) for a in addresses):
        raise RefusedUrl("http:// is only for a receiver on this host (a loopback address); "
                         "use https://")
    for address in addresses:
        if not allowed(address, allow_private=allow_private):
            raise RefusedUrl(f"{host} resolves to {address}, which is not a public address "
                             "(RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE=1 allows private ones, "
                             "for a lab)")
    return Target(scheme, host, port, path, tuple(addresses))


def split(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an http(s) URL, or RefusedUrl."""
    if len(url) > MAX_URL:
        raise RefusedUrl(f"a webhook URL has at most {MAX_URL} characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise RefusedUrl("not a URL (https://HOST[:PORT]/PATH)") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise RefusedUrl("a webhook URL is https://HOST/PATH (or http:// to a loopback address)")
    if parts.username is not None or parts.password is not None:
        raise RefusedUrl("a webhook URL carries no user name or password")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def check(url: str, config) -> Target:
    """Resolve the URL's host now and judge it (RefusedUrl when it breaks the rule)."""
    _, host, port, _ = split(url)
    return judge(url, addresses_of(host, port, config),
                 allow_private=config.outbound_unsafe_allow_private)


def addresses_of(host: str, port: int, config) -> list[str]:
    """Every address of `host` (an address stands for itself)."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    if config.offline:
        raise RefusedUrl(f"{host} is not resolved while RUA_OFFLINE is set")
    try:
        return resolve(host, port)
    except Unreachable:
        raise RefusedUrl(f"{host} could not be resolved") from None


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    carried = carried_ipv4(ip) if ip.version == 6 else [ip]
    return all(v4.is_loopback for v4 in carried) if carried else ip.is_loopback
