"""The webhook URL rule, checked when a channel is added and again before every send.

A URL must be `https`, or `http` to a loopback address (a receiver on this host). Every address
its host resolves to must be public (Python's `ipaddress` is_global) or loopback: a private,
shared, link-local or otherwise reserved address is refused unless
RUA_WEBHOOK_PRIVATE_NETWORKS is on, so whoever adds a channel cannot point the service at
the network it runs in by surprise. Unspecified and multicast addresses are always refused.
The send connects to the address that was checked, so a name answering differently a moment
later (DNS rebinding) cannot get around the rule. Names are resolved by the system resolver,
or by RUA_DNS_NAMESERVERS when set (dnscheck.resolver.Lookup); with RUA_OFFLINE, not at all.
"""
from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL = 2048      # NotifyChannel.target's size


class RefusedUrl(ValueError):
    """The URL breaks the rule; the message says which part and why."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str          # with its query
    address: str       # the checked address the send connects to


def judge(url: str, addresses: list[str], *, allow_private: bool) -> Target:
    """The target of `url` whose host resolved to `addresses`, or RefusedUrl."""
    scheme, host, port, path = split(url)
    if not addresses:
        raise RefusedUrl(f"{host} does not resolve to any address")
    ips = [ipaddress.ip_address(a) for a in addresses]
    ips = [(ip.ipv4_mapped or ip) if ip.version == 6 else ip for ip in ips]
    if scheme == "http" and not all(ip.is_loopback for ip in ips):
        raise RefusedUrl("http:// is only for a receiver on this host (a loopback address); "
                         "use https://")
    for ip in ips:
        if ip.is_unspecified or ip.is_multicast:
            raise RefusedUrl(f"{host} resolves to {ip}, which is not a host to send to")
        if not (ip.is_global or ip.is_loopback or allow_private):
            raise RefusedUrl(f"{host} resolves to {ip}, a private or link-local network "
                             "(set RUA_WEBHOOK_PRIVATE_NETWORKS=1 to allow)")
    return Target(scheme, host, port, path, str(ips[0]))


def split(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an http(s) URL, or RefusedUrl."""
    if len(url) > MAX_URL:
        raise RefusedUrl(f"a webhook URL has at most {MAX_URL} characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise RefusedUrl(f"not a URL: {exc}") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise RefusedUrl("a webhook URL is https://HOST/PATH (or http:// to a loopback address)")
    if parts.username is not None or parts.password is not None:
        raise RefusedUrl("a webhook URL carries no user name or password")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def check(url: str, config) -> Target:
    """Resolve the URL's host now and judge it (RefusedUrl when it breaks the rule)."""
    _, host, port, _ = split(url)
    return judge(url, resolve(host, port, config),
                 allow_private=config.webhook_private_networks)


def resolve(host: str, port: int, config) -> list[str]:
    """Every address of `host` (an address stands for itself)."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    if config.dns_nameservers:
        from dnscheck.resolver import Lookup
        lookup = Lookup(config)
        answers = [lookup.query(host, kind) for kind in ("A", "AAAA")]
        if all(a.unknown for a in answers):
            raise RefusedUrl(f"{host} could not be resolved: {answers[0].why}")
        return [address for a in answers if a.found for address in a.records]
    if config.offline:
        raise RefusedUrl(f"{host} is not resolved while RUA_OFFLINE is set")
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedUrl(f"{host} could not be resolved: {exc}") from None
    return list(dict.fromkeys(info[4][0] for info in found))
