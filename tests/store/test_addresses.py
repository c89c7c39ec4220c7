"""Address spellings: one text per address, an IPv4-mapped IPv6 address being its IPv4."""
import ipaddress

import pytest

from store.addresses import canonical_ip, unmapped


@pytest.mark.parametrize("text, expected", [
    ("::ffff:192.0.2.1", "192.0.2.1"), ("::FFFF:c000:0201", "192.0.2.1"),
    ("2001:0DB8::0020", "2001:db8::20"), ("192.0.2.1", "192.0.2.1"), ("not-an-ip", "not-an-ip")])
def test_every_spelling_of_an_address_is_one_text(text, expected):
    assert canonical_ip(text) == expected


def test_only_a_mapped_address_changes():
    assert unmapped(ipaddress.ip_address("::ffff:192.0.2.1")) == ipaddress.ip_address("192.0.2.1")
    assert unmapped(ipaddress.ip_address("2001:db8::1")) == ipaddress.ip_address("2001:db8::1")
    assert unmapped(ipaddress.ip_address("192.0.2.1")) == ipaddress.ip_address("192.0.2.1")
