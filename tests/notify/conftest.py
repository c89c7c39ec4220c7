"""Fixtures for delivery: an organization, a channel to a live receiver, a clock to move."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from notify import webhook
from store import channels, events
from tests.factories import make_org
from tests.notify.receivers import WebhookReceiver

NOW = datetime(2026, 3, 2, 9, 0, 0)


class Clock:
    """The time a drain sees; tests move it past back-offs and claims."""

    def __init__(self, now: datetime = NOW):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture
def config(config):
    """The receivers here listen on 127.0.0.1: a lab, so private addresses are allowed."""
    return config.replace(outbound_unsafe_allow_private=True)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def org(database):
    return make_org("Acme")


@pytest.fixture
def receiver():
    """A live webhook receiver that verifies with its channel's secret."""
    server = WebhookReceiver(webhook.new_secret()).start()
    yield server
    server.hold.set()
    server.stop()


@pytest.fixture
def hook(org, receiver):
    """A webhook channel of Acme to the receiver, for every deliverable type."""
    return channels.add(org.id, "webhook", receiver.url, None, secret=receiver.secret)


def raise_alert(org, key: str = "example.com", type_: str = "dns_record_missing",
                now: datetime = NOW) -> bool:
    return events.raise_event(org.id, type_, f"{type_}:{key}",
                              title=f"No SPF record for {key}", detail="Publish one.",
                              domain=key, link=f"/domains/{key}/dns", now=now)
