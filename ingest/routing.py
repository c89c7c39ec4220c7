"""Which organization a report belongs to: the one named, or the one monitoring its domain."""
from __future__ import annotations

from ingest.model import NotMonitored, ReportError
from store import compiled as sql
from store.domain_names import organizational_domain
from store.ids import normalize_ulid
from store.models import Domain, Organization


class UnknownOrganization(LookupError):
    """--org names no organization (by id or by name)."""


def find_org(value) -> Organization:
    """An Organization row, given one, its id (ULID, any case) or its exact name."""
    if isinstance(value, Organization):
        return value
    text = str(value).strip()
    ulid = normalize_ulid(text)
    row = Organization.get_or_none(Organization.id == ulid) if ulid else None
    row = row or Organization.get_or_none(Organization.name == text)
    if row is None:
        raise UnknownOrganization(f"unknown organization {text!r} (give its id or exact name)")
    return row


def route(domain: str) -> Organization:
    """The one organization monitoring `domain` (else its organizational domain), or ReportError."""
    orgs = _monitoring(domain)
    return _the_one(domain, orgs) if orgs else by_organizational_domain(domain)


def by_organizational_domain(domain: str) -> Organization:
    """route for a domain no organization monitors as such: the one monitoring its
    organizational domain, or ReportError. Only now the Public Suffix List: most reports are
    for a domain monitored as such."""
    name = organizational_domain(domain)
    orgs = _monitoring(name) if name != domain else []
    if not orgs:
        raise NotMonitored(f"unroutable: no organization monitors {domain}", domain)
    return _the_one(name, orgs)


def _the_one(name: str, orgs: list[Organization]) -> Organization:
    if len(orgs) == 1:
        return orgs[0]
    names = ", ".join(o.name for o in orgs)
    raise ReportError(f"ambiguous: {name} is monitored by several organizations ({names}); "
                      f"choose one with --org")


def _monitoring(name: str) -> list[Organization]:
    """The organizations with `name` among their domains, by name."""
    return [sql.row(Organization, sql.columns(Organization), values)
            for values in _MONITORING.run(name=name)]


_MONITORING = sql.Compiled(lambda name: Organization.select()
                           .join(Domain, on=(Domain.org == Organization.id))
                           .where(Domain.name == name).distinct().order_by(Organization.name))
