"""The shipped service map (services.json): which sending service a domain name belongs to."""
from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Iterable

KINDS = ("mailbox_provider", "esp", "transactional", "forwarder", "security_gateway")
PTR, DKIM, SPF, SPF_INCLUDE = "ptr", "dkim", "spf", "spf_include"


@dataclass(frozen=True)
class Service:
    slug: str
    name: str
    icon: str
    kind: str
    fact: str


@dataclass(frozen=True)
class ServiceMatch:
    """A service and what named it: the signal (ptr, dkim, spf, spf_include) and its domain."""
    service: Service
    via: str
    domain: str


class ServiceMapError(ValueError):
    """The service map file breaks its own rules (unknown kind, a slug or domain twice)."""


def load(text: str) -> dict[str, Service]:
    """Domain -> Service from the map's JSON text; every rule of the file is checked."""
    data = json.loads(text)
    by_domain: dict[str, Service] = {}
    slugs = set()
    for entry in data["services"]:
        service = Service(entry["slug"], entry["name"], entry["icon"], entry["kind"],
                          entry["fact"])
        if service.kind not in KINDS:
            raise ServiceMapError(f"{service.slug}: kind {service.kind!r} is not one of {KINDS}")
        if service.slug in slugs:
            raise ServiceMapError(f"slug {service.slug!r} appears twice")
        if not service.fact.strip():
            raise ServiceMapError(f"{service.slug}: no public fact given")
        slugs.add(service.slug)
        for domain in entry["domains"]:
            domain = domain.lower().rstrip(".")
            if domain in by_domain:
                raise ServiceMapError(f"domain {domain!r} is in {by_domain[domain].slug} and "
                                      f"{service.slug}")
            by_domain[domain] = service
    return by_domain


@functools.lru_cache(maxsize=1)
def shipped() -> dict[str, Service]:
    return load(resources.files("sources").joinpath("services.json").read_text("utf-8"))


def lookup(name: str | None, services: dict[str, Service] | None = None
           ) -> tuple[Service, str] | None:
    """The service whose domain is `name` or a parent of it (the longest wins), and that domain."""
    if not name:
        return None
    services = shipped() if services is None else services
    labels = name.lower().rstrip(".").split(".")
    for start in range(len(labels) - 1):
        candidate = ".".join(labels[start:])
        if candidate in services:
            return services[candidate], candidate
    return None


def identify(ptr: str | None, dkim_domains: Iterable[str] = (), spf_domains: Iterable[str] = (),
             spf_includes: Iterable[str] = (), services: dict[str, Service] | None = None
             ) -> ServiceMatch | None:
    """Which service sends from an IP, from its confirmed PTR name and its passing auth results.

    The forward-confirmed PTR speaks first: it names who runs the IP, while a forwarded message
    may still carry another service's passing signature. When the PTR names no service (none,
    unconfirmed, or outside the map, as a dedicated IP named under the customer's domain), the
    auth results say more, in this order: DKIM d= of signatures that passed from this IP (or
    the CNAME targets of the domain's selector keys), SPF domains that passed from it, then the
    reporting domain's SPF includes that authorize it. Within one kind the service most of its
    domains name wins; a tie names none, since it cannot tell."""
    services = shipped() if services is None else services
    found = lookup(ptr, services)
    if found:
        return ServiceMatch(found[0], PTR, found[1])
    for via, domains in ((DKIM, dkim_domains), (SPF, spf_domains), (SPF_INCLUDE, spf_includes)):
        match = _most_named(via, domains, services)
        if match:
            return match
    return None


def _most_named(via: str, domains: Iterable[str], services) -> ServiceMatch | None:
    votes: Counter = Counter()
    first: dict[str, str] = {}
    for domain in domains:
        found = lookup(domain, services)
        if found:
            votes[found[0]] += 1
            first.setdefault(found[0].slug, found[1])
    ranked = votes.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    service = ranked[0][0]
    return ServiceMatch(service, via, first[service.slug])
