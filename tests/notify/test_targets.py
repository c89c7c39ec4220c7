"""The webhook URL rule: https to public addresses; private ones and http to loopback only with
RUA_OUTBOUND_UNSAFE_ALLOW_PRIVATE; names resolved by the system's resolver, offline not at all."""
from __future__ import annotations

import pytest

from notify import targets, webhook
from notify.drain import drain
from store import channels
from store.models import Outbox
from tests.notify.conftest import raise_alert
from tests.servers import arrived, listening

URL = "https://hooks.example.com/rua"


@pytest.mark.parametrize("url, addresses", [
    (URL, ["93.184.216.34"]),
    (URL, ["2606:2800:220:1:248:1893:25c8:1946"]),
    (URL, ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]),
])
def test_allowed(url, addresses):
    assert targets.judge(url, addresses, allow_private=False).addresses == tuple(addresses)


@pytest.mark.parametrize("url, addresses", [
    ("http://127.0.0.1:8080/in", ["127.0.0.1"]),
    ("http://localhost/in", ["127.0.0.1", "::1"]),
    ("https://localhost:8443/in", ["127.0.0.1"]),
    (URL, ["10.1.2.3"]),
])
def test_allowed_only_in_a_lab(url, addresses):
    with pytest.raises(targets.RefusedUrl, match="not a public address"):
        targets.judge(url, addresses, allow_private=False)
    assert targets.judge(url, addresses, allow_private=True).addresses == tuple(addresses)


@pytest.mark.parametrize("url, addresses, complaint", [
    ("http://hooks.example.com/rua", ["93.184.216.34"], "only for a receiver on this host"),
    ("http://localhost/in", ["127.0.0.1", "93.184.216.34"], "only for a receiver on this host"),
    (URL, ["10.1.2.3"], "not a public address"),
    (URL, ["169.254.169.254"], "not a public address"),
    (URL, ["64:ff9b::a9fe:a9fe"], "not a public address"),     # NAT64 of the metadata address
    (URL, ["2002:a9fe:a9fe::1"], "not a public address"),      # 6to4 of it
    (URL, ["::a9fe:a9fe"], "not a public address"),            # IPv4-compatible
    (URL, ["93.184.216.34", "10.0.0.1"], "not a public address"),  # any address counts
    (URL, ["0.0.0.0"], "not a public address"),
    (URL, ["224.0.0.1"], "not a public address"),
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


def test_the_lab_setting_never_allows_unspecified_or_multicast():
    for address in ("0.0.0.0", "::", "224.0.0.1", "ff02::1"):
        with pytest.raises(targets.RefusedUrl):
            targets.judge(URL, [address], allow_private=True)


def test_target_keeps_path_query_and_default_port():
    target = targets.judge("https://hooks.example.com/a/b?x=1", ["93.184.216.34"],
                           allow_private=False)
    assert (target.host, target.port, target.path) == ("hooks.example.com", 443, "/a/b?x=1")


def test_a_url_that_cannot_be_read_is_refused_without_echoing_it():
    with pytest.raises(targets.RefusedUrl) as refused:
        targets.split("https://hooks.example.com:t0ken/x")
    assert "t0ken" not in str(refused.value)


@pytest.fixture
def lab(config):
    return config.replace(offline=False)      # the notify tests' config is a lab's


@pytest.fixture
def strict(config):
    return config.replace(outbound_unsafe_allow_private=False)


def test_names_resolve_through_the_system_resolver_not_the_checks_nameservers(lab):
    """/etc/hosts names localhost; RUA_DNS_NAMESERVERS (here a port nobody answers on) is for
    the DNS check only."""
    config = lab.replace(dns_nameservers="127.0.0.1", dns_port=9, dns_timeout=0.2)
    target = targets.check("http://localhost:8765/hook", config)
    assert set(target.addresses) <= {"127.0.0.1", "::1"} and target.addresses


def test_a_webhook_to_localhost_is_delivered_with_the_checks_nameservers_set(
        org, receiver, clock, lab):
    channels.add(org.id, "webhook", f"http://localhost:{receiver.port}/hooks/rua", None,
                 secret=receiver.secret)
    raise_alert(org)
    config = lab.replace(dns_nameservers="127.0.0.1", dns_port=9, dns_timeout=0.2)
    assert drain(config, clock).delivered == 1, Outbox.get().last_error


def test_offline_no_name_is_resolved(config):
    with pytest.raises(targets.RefusedUrl, match="RUA_OFFLINE"):
        targets.check(URL, config)
    assert targets.check("http://127.0.0.1:9/x", config).addresses == ("127.0.0.1",)


@pytest.fixture
def listener():
    """Listens on 127.0.0.3, to tell whether anything tried to reach it."""
    with listening("127.0.0.3") as sock:
        yield sock


@pytest.mark.parametrize("host", ["127.0.0.3", "[::ffff:127.0.0.3]"])
def test_the_rule_is_checked_again_before_each_send(org, clock, strict, listener, host):
    """A channel added in a lab (or whose name has since moved inside) is not sent to: no
    connection is attempted and the stored error says nothing of the address or port."""
    port = listener.getsockname()[1]
    channels.add(org.id, "webhook", f"http://{host}:{port}/hook", None, secret="whsec_AAAA")
    raise_alert(org)
    assert drain(strict, clock).retried == 1
    assert not arrived(listener)
    error = Outbox.get().last_error
    assert error == webhook.NOT_REACHED
    assert "127.0.0.3" not in error and str(port) not in error


def test_with_the_lab_setting_the_send_reaches_a_private_address(org, clock, config, listener,
                                                                 monkeypatch):
    monkeypatch.setattr(webhook, "DEADLINE_SECONDS", 0.3)     # the listener never answers
    port = listener.getsockname()[1]
    channels.add(org.id, "webhook", f"http://127.0.0.3:{port}/hook", None, secret="whsec_AAAA")
    raise_alert(org)
    assert drain(config, clock).retried == 1
    assert arrived(listener)
