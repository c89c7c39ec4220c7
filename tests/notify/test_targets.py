"""The webhook URL rule: https, or http to loopback; no private or link-local network unless
RUA_WEBHOOK_PRIVATE_NETWORKS; names resolved by the configured resolver, offline not at all."""
from __future__ import annotations

import pytest

from notify import targets
from notify.drain import drain
from store import channels
from store.models import Outbox
from tests.dns_server import DNSServer
from tests.notify.conftest import raise_alert

URL = "https://hooks.example.com/rua"


@pytest.mark.parametrize("url, addresses", [
    (URL, ["93.184.216.34"]),
    (URL, ["2606:2800:220:1:248:1893:25c8:1946"]),
    ("http://127.0.0.1:8080/in", ["127.0.0.1"]),
    ("http://localhost/in", ["127.0.0.1", "::1"]),
    ("https://localhost:8443/in", ["127.0.0.1"]),
])
def test_allowed(url, addresses):
    assert targets.judge(url, addresses, allow_private=False).address == addresses[0]


@pytest.mark.parametrize("url, addresses, complaint", [
    ("http://hooks.example.com/rua", ["93.184.216.34"], "only for a receiver on this host"),
    ("http://localhost/in", ["127.0.0.1", "93.184.216.34"], "only for a receiver on this host"),
    (URL, ["10.1.2.3"], "private or link-local"),
    (URL, ["192.168.1.10"], "private or link-local"),
    (URL, ["172.16.0.1"], "private or link-local"),
    (URL, ["100.64.0.1"], "private or link-local"),        # carrier-grade NAT
    (URL, ["169.254.169.254"], "private or link-local"),   # cloud metadata
    (URL, ["fe80::1"], "private or link-local"),
    (URL, ["fd00::1"], "private or link-local"),
    (URL, ["::ffff:10.0.0.1"], "private or link-local"),
    (URL, ["93.184.216.34", "10.0.0.1"], "private or link-local"),  # any address counts
    (URL, ["0.0.0.0"], "not a host to send to"),
    (URL, ["224.0.0.1"], "not a host to send to"),
    (URL, [], "does not resolve"),
    ("ftp://hooks.example.com/", ["93.184.216.34"], "https://HOST/PATH"),
    ("https:///path", ["93.184.216.34"], "https://HOST/PATH"),
    ("https://user:pw@hooks.example.com/", ["93.184.216.34"], "no user name or password"),
    ("https://hooks.example.com:70000/", ["93.184.216.34"], "not a URL"),
    ("https://hooks.example.com/" + "a" * 2030, ["93.184.216.34"], "at most 2048 characters"),
])
def test_refused(url, addresses, complaint):
    with pytest.raises(targets.RefusedUrl, match=complaint):
        targets.judge(url, addresses, allow_private=False)


def test_the_setting_allows_private_networks_but_never_unspecified():
    assert targets.judge(URL, ["10.1.2.3"], allow_private=True).address == "10.1.2.3"
    with pytest.raises(targets.RefusedUrl):
        targets.judge(URL, ["0.0.0.0"], allow_private=True)


def test_target_keeps_path_query_and_default_port():
    target = targets.judge("https://hooks.example.com/a/b?x=1", ["93.184.216.34"],
                           allow_private=False)
    assert (target.host, target.port, target.path) == ("hooks.example.com", 443, "/a/b?x=1")


@pytest.fixture(scope="module")
def dns_server():
    server = DNSServer().start()
    server.zone("example.net", """
        hooks IN A 93.184.216.34
        inside IN A 10.9.8.7
        twofaced IN A 93.184.216.35
        twofaced IN AAAA fd12::7
    """)
    yield server
    server.stop()


@pytest.fixture
def dns_config(config, dns_server):
    return config.replace(dns_nameservers="127.0.0.1", dns_port=dns_server.port,
                          dns_timeout=0.5, offline=False)


def test_names_resolve_through_the_configured_nameservers(dns_config):
    assert targets.check("https://hooks.example.net/x", dns_config).address == "93.184.216.34"
    for name in ("inside", "twofaced"):
        with pytest.raises(targets.RefusedUrl, match="private or link-local"):
            targets.check(f"https://{name}.example.net/x", dns_config)
    with pytest.raises(targets.RefusedUrl, match="does not resolve"):
        targets.check("https://missing.example.net/x", dns_config)


def test_offline_no_name_is_resolved(config):
    with pytest.raises(targets.RefusedUrl, match="RUA_OFFLINE"):
        targets.check(URL, config)
    assert targets.check("http://127.0.0.1:9/x", config).address == "127.0.0.1"


def test_the_rule_is_checked_again_before_each_send(org, clock, dns_config, dns_server):
    """A channel whose name has since moved into a private network is not sent to."""
    channels.add(org.id, "webhook", "https://inside.example.net/hook", None, secret="whsec_AAAA")
    raise_alert(org)
    assert drain(dns_config, clock).retried == 1
    error = Outbox.get().last_error
    assert error.startswith("URL refused: inside.example.net resolves to 10.9.8.7")
    assert dns_server.asked("inside.example.net")
