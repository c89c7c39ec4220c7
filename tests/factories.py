"""Small factories with keyword overrides, so a test states only what it is about."""
from __future__ import annotations

from store import keys
from store.models import ApiKey, Domain, Member, Organization

_counter = iter(range(1, 10**9))


def make_org(name: str | None = None, plan: str = "free") -> Organization:
    return Organization.create(name=name or f"org-{next(_counter)}", plan=plan)


def make_member(org, email: str | None = None, role: str = "owner") -> Member:
    return Member.create(org=org, email=email or f"user{next(_counter)}@example.com", role=role)


def make_key(org, scope: str = "read", role: str = "owner", member=None, **fields):
    """An API key row and its plaintext (the only time a key exists in the clear)."""
    member = member or make_member(org, role=role)
    plaintext = keys.new_key()
    row = ApiKey.create(org=org, member=member, digest=keys.digest(plaintext),
                        prefix=keys.display_prefix(plaintext), scope=scope, **fields)
    return row, plaintext


def make_domain(org, name: str = "example.com", source: str = "manual", **fields) -> Domain:
    return Domain.create(org=org, name=name, source=source, **fields)
