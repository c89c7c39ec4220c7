"""Finding the rows an admin command names, with one clear error when they are not there.

The store is imported by each function, when a command runs: `rua --help` does not load it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from cli.common import fail

if TYPE_CHECKING:
    from store.models import ApiKey, Member, Organization


def resolve_org(text: str) -> Organization:
    """The organization named by its id (any case) or its exact name."""
    from store.ids import normalize_ulid
    from store.models import Organization
    ulid = normalize_ulid(text.strip())
    org = (Organization.get_or_none(Organization.id == ulid) if ulid
           else Organization.get_or_none(Organization.name == text.strip()))
    if org is None:
        fail(f"no organization {text!r} (give its id or its name; `rua org list` shows both)")
    return org


def resolve_member(org: Organization, email: str) -> Member:
    from store.models import Member
    member = Member.get_or_none((Member.org == org) & (Member.email == normalize_email(email)))
    if member is None:
        fail(f"{email!r} is not a member of {org.name} (add one with `rua member add`)")
    return member


def resolve_key(text: str) -> ApiKey:
    from store.ids import normalize_ulid
    from store.models import ApiKey
    ulid = normalize_ulid(text.strip())
    key = ApiKey.get_or_none(ApiKey.id == ulid) if ulid else None
    if key is None:
        fail(f"no API key with id {text!r} (`rua key list ORG` shows the ids)")
    return key


def normalize_email(text: str) -> str:
    """An address as stored: case-insensitive, in the e-mail rule's form when it is one (a
    member added before the rule is found by its lower-case text)."""
    from rules.email_address import email_address
    lowered = text.strip().lower()
    return email_address(lowered) or lowered
