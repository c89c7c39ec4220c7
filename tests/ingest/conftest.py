"""Ingest's fixtures: the DNS check's real server on 127.0.0.1, for report mail's DKIM keys."""
from tests.dnscheck.conftest import _dns_server_session, dns_config, dns_server  # noqa: F401
