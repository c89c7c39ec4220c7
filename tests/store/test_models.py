from store.migrations import current_version, latest_version, migrate
from store.models import ApiKey, Organization
from tests.factories import make_key, make_org


def test_migrate_is_idempotent_and_reaches_the_latest_version(database):
    assert migrate(database) == []
    assert current_version(database) == latest_version()


def test_a_key_is_stored_only_as_its_digest(database):
    org = make_org()
    row, plaintext = make_key(org)
    stored = ApiKey.get_by_id(row.id)
    assert plaintext not in (stored.digest, stored.prefix, stored.name)
    assert len(stored.digest) == 64 and plaintext.startswith(stored.prefix)


def test_organization_ids_are_ulids(database):
    org = make_org()
    assert len(Organization.get_by_id(org.id).id) == 26
