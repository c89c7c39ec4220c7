"""One rule for an e-mail address a person gives: email-validator's, without DNS."""
import pytest

from rules.email_address import email_address


@pytest.mark.parametrize("text, stored", [
    ("ops@example.com", "ops@example.com"),
    ("a.b+c@sub.example.co", "a.b+c@sub.example.co"),
    ("ops@Example.COM", "ops@example.com"),                  # the domain in lower case
    ("ana@straße.de", "ana@xn--strae-oqa.de"),              # an IDN domain, in its ASCII form
    ("rua@mailhost", "rua@mailhost"),                        # an intranet host name
])
def test_an_address_is_stored_in_one_form(text, stored):
    assert email_address(text) == stored


@pytest.mark.parametrize("text", [
    "ops", "a..b@example.com", "rua@localhost", "ops@-example.com", "Ops <ops@example.com>",
    "ops@example.com\r\nBcc: x@evil.test", " ops@example.com", "jöe@example.com",
    "x" * 60 + "@" + "a" * 60 + "." + "b" * 60 + "." + "c" * 60 + "." + "d" * 60 + ".com",
])
def test_what_is_not_one_address_is_refused(text):
    assert email_address(text) is None
