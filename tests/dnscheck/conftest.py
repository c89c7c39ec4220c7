"""The DNS check's fixtures: a real authoritative server on 127.0.0.1 and a config aimed at it."""
from __future__ import annotations

import pytest

from tests.dns_server import DNSServer

# Short enough that timeout tests stay quick, long enough for a loaded 2-CPU machine.
TEST_DNS_TIMEOUT = 0.5


@pytest.fixture(scope="session")
def _dns_server_session():
    server = DNSServer().start()
    yield server
    server.stop()


@pytest.fixture
def dns_server(_dns_server_session):
    """The session's server with no zones, faults or recorded questions."""
    _dns_server_session.reset()
    yield _dns_server_session
    _dns_server_session.reset()


@pytest.fixture
def dns_config(config, dns_server):
    """The test's config resolving through the fixture server only."""
    return config.replace(dns_nameservers="127.0.0.1", dns_port=dns_server.port,
                          dns_timeout=TEST_DNS_TIMEOUT, offline=False)
