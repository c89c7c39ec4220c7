"""The DNS check's fixtures (a real authoritative server on 127.0.0.1), reused as they are."""
from tests.dnscheck.conftest import _dns_server_session, dns_config, dns_server  # noqa: F401
