"""The channels' and outbox's tables: migration 7 makes them, deleting their owners empties them."""
from __future__ import annotations

from store import migrations
from store.models import Event, NotifyChannel, Outbox
from tests.notify.conftest import raise_alert


def test_migration_7_creates_both_tables_and_the_queue_index(database):
    database.drop_tables([Outbox, NotifyChannel])
    steps = {step: version for version, _, step in migrations.MIGRATIONS}
    assert steps[migrations._notification_outbox] == 7
    migrations._notification_outbox(database)
    assert {"notify_channel", "outbox"} <= set(database.get_tables())
    assert "outbox_pending" in {index.name for index in database.get_indexes("outbox")}


def test_an_organization_deleted_takes_its_channels_and_queue(org, hook):
    raise_alert(org)
    assert Outbox.select().count() == 1
    org.delete_instance()
    assert NotifyChannel.select().count() == Outbox.select().count() == Event.select().count() == 0


def test_a_deleted_event_takes_its_deliveries(org, hook):
    raise_alert(org)
    Event.delete().execute()
    assert Outbox.select().count() == 0
